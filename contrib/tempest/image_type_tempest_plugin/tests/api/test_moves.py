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

"""Moves go where the image boots and the reservation allows.

Nova runs its request filters for every scheduling, moves included: a
cold migration or a resize must land on a host whose traits fit the
server's image, as its boot did, and a move with nowhere to go is refused
while the server stays where it is. Nova schedules a move after
answering it (202): the refusal is the conductor's event of the request,
ended in Error.
"""

import time

from tempest import config
from tempest.common import waiters
from tempest.lib import decorators
from tempest.lib import exceptions as lib_exc

from image_type_tempest_plugin import expectations
from image_type_tempest_plugin import scheduler_log
from image_type_tempest_plugin.tests.api import base

CONF = config.CONF


class MoveTest(base.ImageTypeFilterTest):
    """Cold migrations and resizes, checked against Placement's traits."""

    # 2.56: a cold migration may name its destination host; 2.84: an
    # instance action's events give their error's message.
    min_microversion = '2.84'

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if CONF.compute.min_compute_nodes < 2:
            raise cls.skipException('[compute] min_compute_nodes < 2: '
                                    'no second compute node to move to')
        if not CONF.compute_feature_enabled.cold_migration:
            raise cls.skipException('[compute-feature-enabled] '
                                    'cold_migration is off')

    def settle(self, server_id, status):
        waiters.wait_for_server_status(self.servers_client, server_id,
                                       status)
        return self.host_of(server_id)

    def assert_refused(self, server_id, where, *reasons, **to):
        """A cold migration (``to``: its host) refused: the conductor's
        event of the request ends in Error with "No valid host", the
        server ACTIVE on ``where`` still, and nova-scheduler's lines for
        the request name each of ``reasons`` (when its log is known)."""
        log = (scheduler_log.SchedulerLog(CONF.image_type_filter.
                                          scheduler_log)
               if CONF.image_type_filter.scheduler_log else None)
        body = self.admin_servers_client.migrate_server(server_id, **to)
        request_id = body.response['x-openstack-request-id']
        event = self.conductor_event(server_id, request_id)
        self.assertEqual('Error', event['result'], 'the move %s was not '
                         'refused: %s' % (request_id, event))
        self.assertIn('No valid host', event.get('details') or '')
        self.assertEqual(where, self.settle(server_id, 'ACTIVE'))
        if log is None:
            return
        lines = scheduler_log.lines_with(log.new_lines(), request_id)
        for reason in reasons:
            self.assertNotEqual(
                [], scheduler_log.lines_with(lines, reason),
                'no line of %s for request %s names %s' % (
                    log.path, request_id, reason))

    def conductor_event(self, server_id, request_id):
        """The conductor's event of a move request, once it has ended."""
        client = self.admin_servers_client
        start = time.time()
        while True:
            events = [e for e in client.show_instance_action(
                server_id, request_id)['instanceAction'].get('events', ())
                if e['event'].startswith('conductor_')]
            if events and events[0].get('finish_time'):
                return events[0]
            if time.time() - start > client.build_timeout:
                raise lib_exc.TimeoutException(
                    'the conductor has not ended move %s of server %s in '
                    '%s s' % (request_id, server_id, client.build_timeout))
            time.sleep(client.build_interval)

    def hosts_lacking(self, trait):
        return sorted(set(self.fleet.traits_by_host) -
                      self.fleet.hosts([trait]))

    @decorators.idempotent_id('5e2a7c41-0b9d-4f3e-8a61-d2c4b7e9f013')
    def test_a_server_moves_only_to_hosts_that_boot_its_format(self):
        # A format at least two unreserved hosts boot (somewhere to go)
        # and some host does not (somewhere it must never go).
        for disk_format in self.formats():
            trait = expectations.trait_for_format(disk_format)
            hosts = self.untagged_hosts(disk_format)
            if len(hosts) >= 2 and self.hosts_lacking(trait):
                break
        else:
            raise self.skipException(
                'no configured format boots on two unreserved hosts and '
                'not on some other host')
        server_id, _ = self.boot(self.image(disk_format))
        self.wait_active(server_id)
        self.assert_lands_in(server_id, hosts, 'a %s server' % disk_format)
        self.admin_servers_client.migrate_server(server_id)
        self.assertIn(self.settle(server_id, 'VERIFY_RESIZE'), hosts,
                      'a cold-migrated %s server' % disk_format)
        self.servers_client.confirm_resize_server(server_id)
        here = self.settle(server_id, 'ACTIVE')
        self.servers_client.resize_server(server_id,
                                          CONF.compute.flavor_ref_alt)
        self.assertIn(self.settle(server_id, 'VERIFY_RESIZE'), hosts,
                      'a resized %s server' % disk_format)
        self.servers_client.revert_resize_server(server_id)
        self.assertEqual(here, self.settle(server_id, 'ACTIVE'))
        # Sent by name to a host that cannot boot it: refused, for the
        # filters asked Placement for the format's trait.
        self.assert_refused(server_id, here, trait,
                            host=self.hosts_lacking(trait)[0])

    @decorators.idempotent_id('a17c9e35-6d42-4b0a-9f58-3e1b2c7d8a24')
    def test_an_untagged_server_never_moves_to_a_reserved_host(self):
        if not self.reserved:
            raise self.skipException('[image_type_filter] reserved_trait '
                                     'is empty')
        disk_format = self.bootable_untagged_format()
        trait = expectations.trait_for_format(disk_format)
        reserved = self.fleet.hosts([trait, self.reserved])
        if not reserved:
            raise self.skipException('no host carries %s and boots %s'
                                     % (self.reserved, disk_format))
        server_id, _ = self.boot(self.image(disk_format))
        self.wait_active(server_id)
        host = self.assert_lands_in(server_id,
                                    self.untagged_hosts(disk_format),
                                    'an untagged image')
        # The reserved host boots the format: only isolation refuses it.
        self.assert_refused(server_id, host, self.reserved,
                            host=sorted(reserved)[0])

    @decorators.idempotent_id('c83f1b06-2e7d-4a95-b4c0-7f6d9e1a5b35')
    def test_a_tagged_server_keeps_to_the_reserved_hosts(self):
        if not self.reserved:
            raise self.skipException('[image_type_filter] reserved_trait '
                                     'is empty')
        server_id, host, reserved = self.boot_tagged()
        if len(reserved) == 1:
            # Its one host: a move has nowhere to go.
            self.assert_refused(server_id, host)
            return
        self.admin_servers_client.migrate_server(server_id)
        self.assertIn(self.settle(server_id, 'VERIFY_RESIZE'), reserved,
                      'a cold-migrated %s server' % self.reserved)
