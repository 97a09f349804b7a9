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

"""Which tempest tests the gate jobs run, and how many at once.

The devstack and grenade jobs run ``PLUGIN_REGEX`` and ``PEER_REGEX``
together with the filters on (``.zuul.yaml``'s ``tempest_test_regex``; a
test holds the two equal) and ``PEER_REGEX`` again with them off.
"""

PLUGIN_REGEX = r'^image_type_tempest_plugin\.'

# Tempest's compute API tests about what the filters touch, that a
# fake-driver cloud with no Cinder and no console passes:
# - servers.test_create_server, test_servers, test_list_server_filters:
#   create, show, list (with filters) and update servers; their volume,
#   SSH and console cases skip themselves from tempest.conf.
# - admin.test_delete_server: delete (one in ERROR, another project's).
#   servers.test_delete_server, test_servers_negative and
#   test_list_servers_negative are out: their classes set
#   create_default_network and skip without Neutron.
# - servers.test_servers_microversions: rebuilds (2.54, 2.57); the
#   rebuilds in test_servers too. test_server_actions' test_rebuild_server
#   is out: it boots its server itself with no 'networks' (400 at 2.37)
#   and waits for SSH; the rest of that class is reboot, stop/start,
#   resize, lock, console (virt-driver features, nothing the filters
#   touch).
# - flavors and images.test_list_images: the flavors API, and the image
#   list as the compute API proxies it.
# Left out as well: attach_interfaces, multi_nic, addresses,
# device_tagging, server_rescue, novnc, server_password, personality
# (guest network, console or config drive); multiple_create (min_count
# boots at once); server_group (affinity filters, not ours);
# images.test_images*, test_image_metadata*, test_list_image_filters
# (server snapshots: FakeDriver uploads no image data); volumes and the
# other admin tests (migrations: one machine); availability_zone,
# instance_actions, server_metadata, server_tags, disk_config,
# servers_microversions (API bookkeeping the scheduler never sees).
PEER_REGEX = (r'^tempest\.api\.compute\.('
              r'servers\.test_create_server\.'
              r'|servers\.test_servers\.'
              r'|servers\.test_list_server_filters\.'
              r'|admin\.test_delete_server\.'
              r'|servers\.test_servers_microversions\.'
              r'|flavors\.'
              r'|images\.test_list_images\.)')

#: Tempest workers. The tests mostly wait on the cloud (polling a server's
#: status every second), so more workers than the machine's two cores
#: shorten a suite; tempest hands out whole test classes, and the plugin
#: has five.
CONCURRENCY = 4
