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

"""The tempest tests the job's regex picks, with the filters on and off."""

import re

import yaml

from gate_cloud import devstack_job
from tests import helpers


def job_regex():
    with open(helpers.REPO + '/.zuul.yaml') as f:
        jobs = {item['job']['name']: item['job'] for item in yaml.safe_load(f)
                if 'job' in item}
    return jobs['image-type-filter-devstack-multinode']['vars'][
        'tempest_test_regex']


def test_the_regexes_pick_what_they_say():
    job = re.compile(job_regex())
    plugin = re.compile(devstack_job.PLUGIN_REGEX)

    def peer(test):
        """Run with the filters off: the job's regex, less the plugin."""
        return bool(job.search(test)) and not plugin.search(test)

    plugin_test = ('image_type_tempest_plugin.tests.api.'
                   'test_image_types.RebuildTest.test_x[id-1]')
    assert job.search(plugin_test) and plugin.search(plugin_test)
    assert not peer(plugin_test)
    assert peer('tempest.api.compute.servers.'
                'test_servers_microversions.ServerShowV254Test.'
                'test_rebuild_server[id-1]')
    assert not peer('tempest.api.compute.servers.test_server_actions.'
                    'ServerActionsTestJSON.test_rebuild_server[id-2]')
    assert not peer('tempest.api.compute.servers.'
                    'test_attach_interfaces.AttachInterfacesTest.test_x')
    assert not peer('tempest.api.compute.servers.test_delete_server.'
                    'DeleteServersTestJSON.test_x')
    assert peer('tempest.api.compute.admin.test_delete_server.'
                'DeleteServersAdminTestJSON.test_x')
    # The multi-host tests, with the filters on and off.
    for test in ('test_migrations.MigrationsAdminTest.test_cold_migration',
                 'test_servers_on_multinodes.ServersOnMultiNodesTest.t',
                 'test_live_migration.LiveMigrationTest.test_x'):
        assert peer('tempest.api.compute.admin.' + test), test
    # Unshelve to a host tempest picks whatever it is: left out.
    assert not peer('tempest.api.compute.admin.test_servers_on_multinodes.'
                    'UnshelveToHostMultiNodesTest.test_unshelve_to_x')
    moves = ('image_type_tempest_plugin.tests.api.test_moves.MoveTest.'
             'test_x[id-1]')
    assert job.search(moves) and not peer(moves)
