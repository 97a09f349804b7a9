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

"""Isolation inside Nova: a host reserved by a trait our reporter reports."""

import pytest

pytest.importorskip('nova')


from tests.nova import base  # noqa: E402

RESERVED = 'CUSTOM_TROVE'
TAG = {'trait:%s' % RESERVED: 'required'}
ISOLATION = {('image_isolation', 'enabled'): True,
             ('image_isolation', 'rules'): [RESERVED, 'CUSTOM_GHOST']}


class TestIsolation(base.InsideNova):
    scheduler_options = dict(ISOLATION)

    def setUp(self):
        super().setUp()
        self._start_compute('trove-host')
        self.report_custom_trait('trove-host', RESERVED)

    def report_custom_trait(self, host, trait):
        self.assertEqual(0, self.run_reporter(
            host, '[virt_capabilities]\ncustom_traits = %s\n' % trait))
        uuid = self._get_provider_uuid_by_host(host)
        self.assertIn(trait, self._get_provider_traits(uuid))

    def test_tagged_image_lands_only_on_the_reserved_host(self):
        for _ in range(3):
            server = self.boot(self.image('raw', **TAG))
            self.assertEqual('trove-host', self.host_of(server))

    def test_ten_untagged_boots_never_land_there(self):
        hosts = {self.host_of(self.boot(base.RAW_IMAGE)) for _ in range(10)}
        self.assertEqual({'compute'}, hosts)

    def test_a_tagged_flavor_behaves_the_same(self):
        flavor = self._create_flavor(memory_mb=512, vcpu=1, disk=1,
                                     ephemeral=0, extra_spec=TAG)
        for _ in range(3):
            server = self.boot(base.RAW_IMAGE, flavor_id=flavor)
            self.assertEqual('trove-host', self.host_of(server))

    def test_a_reserved_trait_placement_lacks_breaks_no_boot(self):
        # CUSTOM_GHOST is reserved but exists nowhere: untagged boots are
        # not a 400, and a request for it says why it found no host.
        self.boot(base.RAW_IMAGE)
        failed = self.boot(self.image('raw', **{'trait:CUSTOM_GHOST':
                                                'required'}),
                           expected='ERROR')
        self.assertIn('No valid host', failed['fault']['message'])
        self.assertIn('CUSTOM_GHOST', failed['fault']['message'])

    def test_rebuild_when_placement_refuses_the_read_is_refused(self):
        """Isolation enforced: a host whose traits cannot be read takes no
        image unchecked (it may be reserved). The rebuild ends in "No
        valid host", the server keeps its image, and one ERROR line names
        Placement and the server."""
        # An untagged server on the unreserved host, and an untagged image
        # it would take if its traits were read. (A tagged image is
        # Nova's conductor's to check first: it reads the traits itself.)
        server = self.boot(base.RAW_IMAGE)
        self.assertEqual('compute', self.host_of(server))
        raw_too = self.image('raw')
        self.placement_refuses(base.PROVIDER_TRAITS_RULE)
        self.api.api_post('/servers/%s/action' % server['id'],
                          {'rebuild': {'imageRef': raw_too}},
                          check_response_status=[500])
        self._wait_for_action_fail_completion(
            server, 'rebuild', 'rebuild_server')
        server = self.api.get_server(server['id'])
        self.assertEqual(base.RAW_IMAGE, server['image']['id'])
        # The fault says why, with no Placement detail (the user sees it).
        self.assertEqual(
            'No valid host was found. The server\'s host could not be '
            'checked for the new image (its traits could not be read), and '
            'with image isolation enforced a host takes no image unchecked.',
            server['fault']['message'])
        [line] = [line for line in self.stdlog.logger.output.splitlines()
                  if 'rebuild of server' in line]
        self.assertIn('ERROR', line)
        self.assertIn('rebuild of server %s to image %s refused on host '
                      % (server['id'], raw_too), line)
        self.assertIn(': its traits could not be read from Placement '
                      '(Placement refused GET /resource_providers/', line)
        self.assertIn('/traits (403, policy %s)' % base.PROVIDER_TRAITS_RULE,
                      line)
        self.assertIn('with [image_isolation] enforced a host takes no '
                      'image unchecked', line)

    def test_rebuild_onto_the_reserved_host_with_an_untagged_image(self):
        server = self.boot(self.image('raw', **TAG))
        self.assertEqual('trove-host', self.host_of(server))
        self.api.api_post('/servers/%s/action' % server['id'],
                          {'rebuild': {'imageRef': base.RAW_IMAGE}},
                          check_response_status=[500])
        self._wait_for_action_fail_completion(
            server, 'rebuild', 'rebuild_server')
        server = self.api.get_server(server['id'])
        self.assertEqual('trove-host', self.host_of(server))
        self.assertEqual(
            'No valid host was found. The server\'s host cannot take the new '
            'image. The host has CUSTOM_TROVE, which the new image must not '
            'meet.', server['fault']['message'])
