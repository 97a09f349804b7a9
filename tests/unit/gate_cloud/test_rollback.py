# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""The rollback's nova.conf at each step, read as nova-scheduler reads it,
and the order of its steps.

``tests/nova/test_rollback_order.py`` starts Nova's own scheduler on these
files; the gate does it for real.
"""

from oslo_config import cfg

from gate_cloud import inifile
from gate_cloud import rollback
from image_type_filter import conf as itf_conf
from tests.repository import test_config_blocks
from tests.unit.gate_cloud import test_gate_cloud

CREDS = test_gate_cloud.CREDS
#: nova/conf/scheduler.py (34.0.0): the options Nova's own mechanisms are.
NOVA_MECHANISM_OPTS = [
    cfg.BoolOpt('query_placement_for_image_type_support', default=False),
    cfg.BoolOpt('enable_isolated_aggregate_filtering', default=False),
    cfg.BoolOpt('image_metadata_prefilter', default=False),
]


def as_nova_reads(tmp_path, sections):
    path = tmp_path / 'nova.conf'
    path.write_text(inifile.render(sections))
    conf = cfg.ConfigOpts()
    itf_conf.register_nova_opts(conf)
    conf.register_opts(NOVA_MECHANISM_OPTS, group='scheduler')
    conf.register_opts([
        cfg.MultiStrOpt('available_filters',
                        default=['nova.scheduler.filters.all_filters']),
        cfg.ListOpt('enabled_filters', default=[])],
        group='filter_scheduler')
    conf([], project='nova', default_config_files=[str(path)])
    return conf


def test_first_novas_mechanisms_beside_the_filters(tmp_path):
    conf = as_nova_reads(tmp_path, rollback.scheduler_conf(CREDS, True,
                                                           True))
    assert conf.scheduler.query_placement_for_image_type_support
    assert conf.scheduler.enable_isolated_aggregate_filtering
    assert conf.scheduler.image_metadata_prefilter
    assert 'image_type_filter.nova.all_filters' in \
        conf.filter_scheduler.available_filters
    assert 'ImageTypeRebuildFilter' in conf.filter_scheduler.enabled_filters
    assert conf.scheduler.filter_hosts_by_image_type_support
    assert conf.image_isolation.enabled


def test_then_the_filters_lines_out_novas_mechanisms_stay(tmp_path):
    sections = rollback.scheduler_conf(CREDS, False, True)
    conf = as_nova_reads(tmp_path, sections)
    assert conf.filter_scheduler.available_filters == [
        'nova.scheduler.filters.all_filters']
    assert 'ImageTypeRebuildFilter' not in \
        conf.filter_scheduler.enabled_filters
    assert conf.scheduler.query_placement_for_image_type_support
    assert conf.scheduler.enable_isolated_aggregate_filtering
    # Nothing of ours is left in the file at all.
    for ours in ('image_type_filter', 'image_isolation',
                 'image_metadata_prefilter'):
        assert ours not in sections
    assert 'filter_hosts_by_image_type_support' not in sections['scheduler']


def test_the_documented_mechanisms_are_the_ones_the_gate_turns_on(
        tmp_path):
    [block] = [b for page, caption, b in
               test_config_blocks.captioned_doc_blocks()
               if page.endswith('install/upgrade.rst')
               and caption and "Nova's own mechanisms" in caption]
    documented = {}
    for section, key in test_config_blocks.set_options(block):
        documented.setdefault(section, {})[key] = block.split(
            key + ' = ', 1)[1].split('\n', 1)[0]
    assert documented == rollback.NOVA_MECHANISMS


def test_the_package_goes_after_the_lines_and_the_lines_after_novas_own():
    titles = rollback.titles(operator_only=True)
    assert titles == [
        'Turn on Nova\'s own mechanisms beside the filters',
        'Take the filters\' lines out of nova.conf',
        'Uninstall the package from nova-scheduler\'s environment']
    assert rollback.titles()[-1] == \
        'The reverse order stops nova-scheduler at start-up'
