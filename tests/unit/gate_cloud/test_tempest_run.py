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

"""gate_cloud.tempest_run: the tempest.conf it writes, the totals it reads."""

import configparser
import os
import sys

import pytest

from gate_cloud import tempest_run
from tests import helpers

REPO = helpers.REPO


def cloud(tmp_path, **extra):
    scheduler_conf = tmp_path / 'nova-scheduler.conf'
    scheduler_conf.write_text(
        '[filter_scheduler]\n'
        'available_filters = nova.scheduler.filters.all_filters\n'
        'available_filters = image_type_filter.nova.all_filters\n'
        'enabled_filters = ComputeFilter,ImageTypeRebuildFilter\n')
    value = {
        'auth_url': 'http://127.0.0.1:5000/v3', 'region': 'RegionOne',
        'admin': {'username': 'admin', 'password': 'pw$%', 'project_name':
                  'admin', 'user_domain_name': 'Default',
                  'project_domain_name': 'Default'},
        'endpoints': {'identity': 'http://127.0.0.1:5000/v3',
                      'compute': 'http://127.0.0.1:8774/v2.1',
                      'image': 'http://127.0.0.1:9292',
                      'placement': 'http://127.0.0.1:8778',
                      'network': 'http://127.0.0.1:9696'},
        'flavor': {'id': '42', 'name': 'gate.tiny'},
        'image_files': {'qcow2': '/i/empty.qcow2', 'raw': '/i/empty.raw',
                        'vmdk': '/i/empty.vmdk'},
        'computes': [
            {'host': 'vm', 'image_types': ['qcow2', 'raw', 'iso']},
            {'host': 'fake1', 'image_types': ['raw']},
            {'host': 'fake2', 'image_types': ['raw'],
             'custom_traits': ['CUSTOM_TROVE']}],
        'reserved_trait': 'CUSTOM_TROVE',
        'image_metadata_family': 'architecture',
        'scheduler': {'nova_conf': str(scheduler_conf),
                      'log': '/c/logs/nova-scheduler.log', 'workers': 2},
        'venv': '/c/.venv-cloud',
    }
    value.update(extra)
    return value


def written(tmp_path, the_cloud):
    path = tmp_path / 'ws' / 'etc' / 'tempest.conf'
    tempest_run.write_conf(path, tempest_run.tempest_conf(
        the_cloud, tmp_path / 'ws', 'img-1', 'img-2', '2.100', '1.39',
        '43'))
    assert oct(path.stat().st_mode & 0o777) == '0o600'  # a password inside
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    return path, parser


def test_conf_from_cloud_json(tmp_path):
    _, conf = written(tmp_path, cloud(tmp_path))
    assert conf['auth']['admin_password'] == 'pw$%'
    assert conf['compute']['image_ref'] == 'img-1'
    assert conf['compute']['image_ref_alt'] == 'img-2'
    assert conf['compute']['flavor_ref'] == '42'
    assert conf['compute']['flavor_ref_alt'] == '43'
    assert conf['compute']['min_compute_nodes'] == '3'
    assert conf['compute']['max_microversion'] == '2.100'
    assert conf['compute']['min_microversion'] == '2.37'
    # No guest network: the network endpoint is a stand-in.
    assert conf['service_available']['neutron'] == 'False'
    assert conf['validation']['run_validation'] == 'False'
    # The scheduler's own list, so tempest skips the other filters' tests.
    assert conf['compute-feature-enabled']['scheduler_enabled_filters'] == \
        'ComputeFilter,ImageTypeRebuildFilter'
    plugin = conf['image_type_filter']
    assert plugin['image_files'] == ('qcow2:/i/empty.qcow2,raw:/i/empty.raw,'
                                     'vmdk:/i/empty.vmdk')
    assert plugin['reserved_trait'] == 'CUSTOM_TROVE'
    assert plugin['image_metadata_family'] == 'architecture'
    assert plugin['scheduler_log'] == '/c/logs/nova-scheduler.log'
    assert plugin['scheduler_workers'] == '2'


def test_conf_without_family_leaves_it_unset(tmp_path):
    _, conf = written(tmp_path, cloud(tmp_path, image_metadata_family=None))
    assert 'image_metadata_family' not in conf['image_type_filter']


def test_every_option_written_is_one_tempest_or_the_plugin_reads(tmp_path):
    """oslo.config ignores unknown options: a misspelt one would pass
    silently. Check each against tempest's and the plugin's own lists."""
    config = pytest.importorskip('tempest.config')
    from oslo_concurrency import opts as concurrency_opts
    from oslo_log import _options as log_options
    sys.path.insert(0, os.path.join(REPO, 'contrib', 'tempest'))
    try:
        from image_type_tempest_plugin import config as plugin_config
    finally:
        sys.path.pop(0)
    known = {}
    for group, opts in config._opts:
        known.setdefault(group.name if group else 'DEFAULT', set()).update(
            o.dest for o in opts)
    for opt in (log_options.logging_cli_opts +
                log_options.generic_log_opts):
        known['DEFAULT'].add(opt.dest)
    for group, opts in concurrency_opts.list_opts():
        known.setdefault(group, set()).update(o.dest for o in opts)
    known[plugin_config.group.name] = {o.dest for o in plugin_config.opts}
    _, conf = written(tmp_path, cloud(tmp_path))
    for section in conf.sections():
        dests = known.get(section)
        assert dests is not None, section
        for option in set(conf[section]) - set(conf.defaults()):
            assert option.replace('-', '_') in dests, (section, option)
    for option in conf.defaults():
        assert option in known['DEFAULT'], option


def test_reference_format_boots_on_the_most_computes(tmp_path):
    assert tempest_run.reference_format(cloud(tmp_path)) == 'raw'
    qcow2 = cloud(tmp_path, computes=[{'image_types': ['qcow2']},
                                      {'image_types': ['qcow2', 'raw']},
                                      {'image_types': []}])
    assert tempest_run.reference_format(qcow2) == 'qcow2'
    none = cloud(tmp_path, computes=[{'image_types': ['aki']},
                                     {'image_types': []}])
    with pytest.raises(tempest_run.RunError, match='any compute'):
        tempest_run.reference_format(none)


def test_alt_flavor_from_cloud_json_needs_no_client():
    assert tempest_run.alt_flavor({'flavor_alt': {'id': '43'},
                                   'venv': '/nonexistent'}) == '43'


def test_compute_root():
    assert tempest_run.compute_root(
        {'endpoints': {'compute': 'http://127.0.0.1:8774/v2.1'}}) == \
        'http://127.0.0.1:8774/'


TOTALS = '''{0} tempest.api... [1.2s] ... ok

======
Totals
======
Ran: 7 tests in 99.1 sec.
 - Passed: 5
 - Skipped: 1
 - Expected Fail: 0
 - Unexpected Success: 0
 - Failed: 1
Sum of execute time for each test: 80.2 sec.
'''


def test_parse_totals():
    totals = tempest_run.parse_totals(TOTALS)
    assert (totals['passed'], totals['skipped'], totals['failed']) == \
        (5, 1, 1)
    assert totals['summary'].startswith('Totals\n')
    assert 'Ran: 7 tests' in totals['summary']


def test_no_totals_is_none():
    assert tempest_run.parse_totals('Traceback ...\nImportError') is None


def test_unknown_suite_is_refused(tmp_path):
    with pytest.raises(tempest_run.RunError, match='unknown suite'):
        tempest_run.run(cloud(tmp_path), tmp_path, 'smoke')


def test_the_regexes_pick_what_they_say():
    import re
    plugin = re.compile(tempest_run.PLUGIN_REGEX)
    peer = re.compile(tempest_run.PEER_REGEX)
    assert plugin.search('image_type_tempest_plugin.tests.api.'
                         'test_image_types.RebuildTest.test_x[id-1]')
    assert peer.search('tempest.api.compute.servers.'
                       'test_servers_microversions.ServerShowV254Test.'
                       'test_rebuild_server[id-1]')
    assert not peer.search('tempest.api.compute.servers.test_server_actions.'
                           'ServerActionsTestJSON.test_rebuild_server[id-2]')
    assert not peer.search('tempest.api.compute.servers.'
                           'test_attach_interfaces.AttachInterfacesTest.'
                           'test_x')
    assert not peer.search('image_type_tempest_plugin.tests.api.x')
    # Classes that skip without Neutron are not listed.
    assert not peer.search('tempest.api.compute.servers.test_delete_server.'
                           'DeleteServersTestJSON.test_x')
    assert peer.search('tempest.api.compute.admin.test_delete_server.'
                       'DeleteServersAdminTestJSON.test_x')
