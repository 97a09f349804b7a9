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

"""Shared set-up: the fleet as Placement sees it, images, boots, waits."""

import time

from tempest import config
from tempest.api.compute import base
from tempest.common import waiters
from tempest.lib import exceptions as lib_exc
from tempest.lib.common.utils import data_utils
from tempest.lib.common.utils import test_utils

from image_type_tempest_plugin import expectations

CONF = config.CONF


class ImageTypeFilterTest(base.BaseV2ComputeAdminTest):
    """Boots servers and checks where they land against Placement."""

    # 2.37: servers boot with networks='none' (no guest network needed).
    min_microversion = '2.37'
    #: Resource provider traits. Set on the placement clients directly, not
    #: as placement_min_microversion: devstack leaves [placement]
    #: max_microversion unset, which would skip every test.
    placement_microversion = '1.6'

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.image_type_filter.image_files:
            raise cls.skipException('[image_type_filter] image_files is '
                                    'empty')

    @classmethod
    def setup_clients(cls):
        super().setup_clients()
        cls.providers_client = cls.os_admin.resource_providers_client
        cls.hypervisors_client = cls.os_admin.hypervisor_client

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        cls.setup_api_microversion_fixture(
            placement_microversion=cls.placement_microversion)
        names = [h['hypervisor_hostname'] for h in
                 cls.hypervisors_client.list_hypervisors()['hypervisors']]
        cls.fleet = expectations.Fleet.from_placement(cls.providers_client,
                                                      names)
        cls.reserved = CONF.image_type_filter.reserved_trait or None
        cls.images = {}
        for disk_format in CONF.image_type_filter.image_files:
            if expectations.trait_for_format(disk_format) is None:
                raise lib_exc.InvalidConfiguration(
                    '[image_type_filter] image_files: %s is no disk_format '
                    'os-traits has a COMPUTE_IMAGE_TYPE_ trait for'
                    % disk_format)

    # What the cloud should do, from Placement.

    @classmethod
    def untagged_hosts(cls, disk_format):
        """Hosts an untagged image of this format may land on."""
        return cls.fleet.hosts(
            [expectations.trait_for_format(disk_format)],
            [cls.reserved] if cls.reserved else [])

    @classmethod
    def formats(cls):
        """Configured formats, raw first (every virt driver boots it)."""
        return sorted(CONF.image_type_filter.image_files,
                      key=lambda f: (f != 'raw', f))

    @classmethod
    def bootable_untagged_format(cls):
        for disk_format in cls.formats():
            if cls.untagged_hosts(disk_format):
                return disk_format
        raise cls.skipException('no configured image format boots on an '
                                'unreserved host')

    # Images and servers.

    @classmethod
    def image(cls, disk_format, **properties):
        """An active image of ``disk_format`` (made once per class)."""
        key = (disk_format, tuple(sorted(properties.items())))
        if key in cls.images:
            return cls.images[key]
        path = CONF.image_type_filter.image_files[disk_format]
        image = cls.images_client.create_image(
            name=data_utils.rand_name(prefix=CONF.resource_name_prefix,
                                      name='image-type-' + disk_format),
            disk_format=disk_format,
            container_format=expectations.container_format(disk_format),
            visibility='private', **properties)
        cls.addClassResourceCleanup(
            cls.images_client.wait_for_resource_deletion, image['id'])
        cls.addClassResourceCleanup(
            test_utils.call_and_ignore_notfound_exc,
            cls.images_client.delete_image, image['id'])
        with open(path, 'rb') as data:
            try:
                cls.images_client.store_image_file(image['id'], data)
            except (lib_exc.InvalidContentType, lib_exc.BadRequest) as exc:
                # Glance checks the data against disk_format.
                raise lib_exc.InvalidConfiguration(
                    '[image_type_filter] image_files: Glance refused %s as '
                    'a %s image: %s' % (path, disk_format, exc))
        waiters.wait_for_image_status(cls.images_client, image['id'],
                                      'active')
        cls.images[key] = image['id']
        return image['id']

    def boot(self, image_id):
        """Create a server (no wait); return (server id, request id)."""
        body = self.servers_client.create_server(
            name=data_utils.rand_name(prefix=CONF.resource_name_prefix,
                                      name=self.__class__.__name__),
            imageRef=image_id, flavorRef=CONF.compute.flavor_ref,
            networks='none')
        server_id = body['server']['id']
        # Servers here end in ERROR by design (refused boots and rebuilds):
        # a delete is awaited until the server is gone (still bounded by
        # build_timeout), not failed for being in ERROR on the way.
        self.addCleanup(waiters.wait_for_server_termination,
                        self.servers_client, server_id, ignore_error=True)
        self.addCleanup(test_utils.call_and_ignore_notfound_exc,
                        self.servers_client.delete_server, server_id)
        return server_id, body.response['x-openstack-request-id']

    def delete(self, server_ids):
        for server_id in server_ids:
            self.servers_client.delete_server(server_id)
        for server_id in server_ids:
            waiters.wait_for_server_termination(self.servers_client,
                                                server_id, ignore_error=True)

    def wait_active(self, server_id):
        waiters.wait_for_server_status(self.servers_client, server_id,
                                       'ACTIVE')

    def wait_settled(self, server_id, passing=('BUILD', 'REBUILD')):
        """Poll (as tempest's waiters do) until the server leaves
        ``passing`` with no task; return it as an admin sees it."""
        client = self.servers_client
        start = time.time()
        while True:
            server = self.admin_servers_client.show_server(server_id)[
                'server']
            if (server['status'] not in passing and
                    server.get('OS-EXT-STS:task_state') is None):
                return server
            if time.time() - start > client.build_timeout:
                raise lib_exc.TimeoutException(
                    'server %s still %s after %s s' % (
                        server_id, server['status'], client.build_timeout))
            time.sleep(client.build_interval)

    def host_of(self, server_id):
        """The compute node (= resource provider name) of a server."""
        return self.admin_servers_client.show_server(server_id)['server'][
            'OS-EXT-SRV-ATTR:hypervisor_hostname']

    def assert_lands_in(self, server_id, hosts, what):
        host = self.host_of(server_id)
        self.assertIn(host, hosts, '%s landed on %s, which Placement says '
                      'is not one of %s' % (what, host, sorted(hosts)))
        return host

    def boot_tagged(self):
        """A server of an image tagged with the reserved trait, ACTIVE on
        a reserved host that boots its format: (server, host, the reserved
        hosts of that format). Skips where no such host is."""
        for disk_format in self.formats():
            trait = expectations.trait_for_format(disk_format)
            reserved = self.fleet.hosts([trait, self.reserved])
            if reserved:
                break
        else:
            raise self.skipException('no host carries %s and a configured '
                                     'format' % self.reserved)
        image_id = self.image(disk_format,
                              **{'trait:' + self.reserved: 'required'})
        server_id, _ = self.boot(image_id)
        self.wait_active(server_id)
        host = self.assert_lands_in(server_id, reserved,
                                    'a %s image' % self.reserved)
        return server_id, host, reserved

    def assert_no_valid_host(self, server, *words):
        self.assertEqual('ERROR', server['status'])
        message = server.get('fault', {}).get('message', '')
        self.assertIn('No valid host', message)
        for word in words:
            self.assertIn(word, message, 'the fault does not name %s' % word)
        return message

    def boot_in_waves(self, image_id, count, check):
        """Boot ``count`` servers, [image_type_filter] boots_at_once at a
        time; ``check(server_id, request_id)`` each once ACTIVE, then
        delete the wave. Stops early when ``check`` returns True."""
        booted = 0
        while booted < count:
            wave = [self.boot(image_id) for _ in range(
                min(CONF.image_type_filter.boots_at_once, count - booted))]
            booted += len(wave)
            done = False
            for server_id, request_id in wave:
                self.wait_active(server_id)
                done = check(server_id, request_id) or done
            self.delete([server_id for server_id, _ in wave])
            if done:
                break
        return booted
