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

"""The image-type request filter, Nova's cases and ours."""

import dataclasses
import logging
import types

from oslo_config import cfg
import pytest

from image_type_common import exceptions as common_exceptions
from image_type_common import image_types
from image_type_filter import conf as itf_conf
from image_type_filter import exceptions
from image_type_filter import settings as settings_mod
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import image_type_support
from image_type_filter.scheduler import pipeline as filter_pipeline
from image_type_filter.scheduler import trait_catalog
from tests import scheduler_conf

read = settings_mod.FilterSettings.from_conf

Filter = image_type_support.RequireImageTypeSupport


def make(conf):
    return Filter(read(conf))


def over(conf, placement):
    """The filter as the pipeline builds it over ``placement``."""
    return Filter(read(conf), trait_catalog.for_placement(placement,
                                                          read(conf)))


@pytest.fixture
def conf():
    return scheduler_conf.new_conf(
        scheduler__filter_hosts_by_image_type_support=True)


def spec(disk_format='qcow2', **kwargs):
    return our_filters.RequestSpec.for_boot(disk_format, {'VCPU': 1}, **kwargs)


def test_the_settings_write_no_default_of_their_own():
    """The options' defaults live in image_type_filter/conf/ alone: a
    settings field has none, and ``defaults`` reads the options'."""
    assert [f.name for f in dataclasses.fields(settings_mod.FilterSettings)
            if f.default is not dataclasses.MISSING
            or f.default_factory is not dataclasses.MISSING] == []
    conf = scheduler_conf.new_conf()
    assert settings_mod.FilterSettings.defaults() == read(conf)
    assert settings_mod.FilterSettings.defaults(
        isolation_rules=('CUSTOM_X',)).isolation_rules == ('CUSTOM_X',)

def test_disabled_adds_nothing(conf):
    conf.set_override('filter_hosts_by_image_type_support', False,
                      'scheduler')
    request = spec()
    assert make(conf)(None, request) is False
    assert request.root_required == set()


def test_adds_the_trait_for_the_format(conf):
    request = spec('QCOW2')
    assert make(conf)(None, request) is True
    assert request.root_required == {'COMPUTE_IMAGE_TYPE_QCOW2'}


def test_volume_backed_adds_nothing(conf):
    request = spec(is_bfv=True)
    assert make(conf)(None, request) is False
    assert request.root_required == set()


def test_no_image_adds_nothing(conf):
    request = our_filters.RequestSpec(resources={'VCPU': 1})
    assert make(conf)(None, request) is False


@pytest.mark.parametrize('disk_format', [None, '', 'qed', 'docker',
                                         'qcow2&required=!X', 'in:RAW,QCOW2'])
def test_unknown_format_ignored_with_one_warning(conf, caplog, disk_format):
    request_filter_ = Filter(read(conf))
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert request_filter_(None, spec(disk_format)) is False
    warnings = [r for r in caplog.records if 'maps to no known' in
                r.getMessage()]
    assert len(warnings) == 1


def test_unknown_format_rejected_names_it_and_the_known_ones(conf):
    conf.set_override('unknown_format', 'reject', 'image_type_filter')
    with pytest.raises(exceptions.NoValidHost,
                       match='not a known image type') as err:
        Filter(read(conf))(None, spec('qed'))
    assert "'qed'" in str(err.value)
    for fmt in image_types.FORMATS:
        assert fmt in str(err.value)


def test_warning_memory_is_bounded(conf):
    """A disk_format comes from an untrusted image: what the filter keeps
    to warn once per format fills up to its bound and then stops growing,
    whatever that bound is (read from the filter, not written here)."""
    request_filter_ = Filter(read(conf))
    memory = request_filter_._unknown
    bound = memory.limit
    sizes = []
    for i in range(2 * bound + 10):
        request_filter_(None, spec('bogus%d' % i))
        sizes.append(len(memory.seen))
    assert sizes[bound - 1] == bound  # each distinct format remembered
    assert max(sizes) == bound  # and nothing past the bound


def test_log_line_of_hostile_format_is_one_bounded_line(conf, caplog):
    hostile = 'x\nFAKE LOG LINE\x00' + 'y' * 10000
    with caplog.at_level(logging.WARNING):
        Filter(read(conf))(None, spec(hostile))
    message = caplog.records[-1].getMessage()
    assert '\n' not in message and '\x00' not in message
    assert len(message) < 300


def test_nova_shaped_object(conf):
    nova_spec = types.SimpleNamespace(
        image=types.SimpleNamespace(disk_format='vmdk'), is_bfv=False,
        root_required=set())
    assert Filter(read(conf))(None, nova_spec)
    assert nova_spec.root_required == {'COMPUTE_IMAGE_TYPE_VMDK'}


@pytest.mark.parametrize('option', ['filter_hosts_by_image_type_support',
                                    'query_placement_for_image_type_support'])
def test_both_option_names_enable_it(tmp_path, option):
    path = tmp_path / 'nova.conf'
    path.write_text('[scheduler]\n%s = True\n' % option)
    conf = cfg.ConfigOpts()
    itf_conf.register_opts(conf)
    conf([], default_config_files=[str(path)])
    request = spec('raw')
    assert make(conf)(None, request)
    assert request.root_required == {'COMPUTE_IMAGE_TYPE_RAW'}


def test_nova_added_the_trait_already_so_we_add_nothing(tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text('[scheduler]\nquery_placement_for_image_type_support = '
                    'True\nfilter_hosts_by_image_type_support = True\n')
    conf = cfg.ConfigOpts()
    itf_conf.register_opts(conf)
    conf([], default_config_files=[str(path)])
    request = spec('raw')
    request.root_required.add('COMPUTE_IMAGE_TYPE_RAW')  # Nova's own filter
    assert make(conf)(None, request) is False
    assert request.root_required == {'COMPUTE_IMAGE_TYPE_RAW'}


def test_nova_option_is_not_reported_deprecated(tmp_path, caplog):
    path = tmp_path / 'nova.conf'
    path.write_text('[scheduler]\nquery_placement_for_image_type_support = '
                    'True\n')
    conf = cfg.ConfigOpts()
    itf_conf.register_opts(conf)
    with caplog.at_level(logging.DEBUG):
        conf([], default_config_files=[str(path)])
        assert make(conf)(None, spec('raw'))
    assert not [r for r in caplog.records
                if 'deprecated' in r.getMessage().lower()]


def test_pipeline_runs_filters_in_order_and_reports(conf, caplog):
    calls = []

    def make(name, adds):
        def request_filter_(ctxt, request):
            calls.append(name)
            if adds:
                request.root_forbidden.add('CUSTOM_' + name.upper())
            return adds
        return name, request_filter_

    pipeline = filter_pipeline.RequestFilterPipeline([
        ('require_image_type_support',
         Filter(read(conf))),
        make('second', True), make('third', False)])
    request = spec('raw')
    with caplog.at_level(logging.DEBUG, logger='image_type_filter'):
        added = pipeline(None, request)
    assert added == ['require_image_type_support', 'second']
    assert calls == ['second', 'third']
    debug = [r.getMessage() for r in caplog.records
             if r.levelno == logging.DEBUG]
    assert any('second' in m and 'CUSTOM_SECOND' in m for m in debug)
    assert any('third' in m and 'nothing' in m for m in debug)


def test_the_pipeline_runs_the_three_filters_image_type_first(conf):
    pipeline = filter_pipeline.RequestFilterPipeline.from_settings(read(conf))
    assert [name for name, _ in pipeline.filters] == [
        'require_image_type_support', 'isolate_image_properties',
        'image_metadata_prefilter']


class CarriedTraits:
    """Placement's ``GET /traits?associated=true``, from a given set."""

    def __init__(self, carried):
        self.carried = set(carried)
        self.asked = 0

    def list_associated_traits(self):
        self.asked += 1
        return set(self.carried)


def test_a_format_no_host_boots_fails_naming_it_and_what_the_cloud_boots(
        conf):
    placement = CarriedTraits({'COMPUTE_NODE', 'COMPUTE_IMAGE_TYPE_QCOW2',
                               'COMPUTE_IMAGE_TYPE_RAW'})
    image_filter = over(conf, placement)
    for _ in range(3):
        with pytest.raises(exceptions.NoValidHost) as err:
            image_filter(None, spec('vmdk'))
    assert str(err.value) == (
        'No compute host boots vmdk images (COMPUTE_IMAGE_TYPE_VMDK); this '
        'cloud boots qcow2, raw.')
    assert err.value.exit_code == 3
    request = spec('raw')
    assert image_filter(None, request)
    assert request.root_required == {'COMPUTE_IMAGE_TYPE_RAW'}
    # One fresh read per refusal; none for the boot some host takes.
    assert placement.asked == 3


def test_when_placement_cannot_say_the_query_decides(conf):
    class Down:
        def list_associated_traits(self):
            raise common_exceptions.PlacementUnavailable('down')
    request = spec('vmdk')
    assert over(conf, Down())(None, request)
    assert request.root_required == {'COMPUTE_IMAGE_TYPE_VMDK'}
