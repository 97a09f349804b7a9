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

    def test_rebuild_onto_the_reserved_host_with_an_untagged_image(self):
        server = self.boot(self.image('raw', **TAG))
        self.assertEqual('trove-host', self.host_of(server))
        self.api.api_post('/servers/%s/action' % server['id'],
                          {'rebuild': {'imageRef': base.RAW_IMAGE}},
                          check_response_status=[500])
        self._wait_for_action_fail_completion(
            server, 'rebuild', 'rebuild_server')
