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

"""The tempest tests devstack_job's regexes pick."""

import re

from gate_cloud import devstack_job


def test_the_regexes_pick_what_they_say():
    plugin = re.compile(devstack_job.PLUGIN_REGEX)
    peer = re.compile(devstack_job.PEER_REGEX)
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
