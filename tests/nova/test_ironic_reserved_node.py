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

"""A reserved ironic node stays reserved: Nova's own ironic driver and
resource tracker, a real Ironic, the reporter beside them.

nova-compute runs Nova's ironic driver (``ironic.IronicDriver``, through
openstacksdk, as in production) against a real Ironic on 127.0.0.1 (API
and conductor, fake-hardware nodes, ``tests/ironic_server.py``), in Nova's
functional harness with a real Placement and the isolation filter of this
project enabled for ``CUSTOM_TROVE``. ``[compute]
resource_provider_association_refresh`` is 1 s, so nova-compute re-reads
its providers and pushes its own view of their traits within the test
(the production default is 300 s): the push Nova's ironic driver makes
with the whole trait set of the Ironic node.

The proof: the reporter keeps ``CUSTOM_TROVE`` on the reserved node's
Ironic node; after nova-compute's pushes the provider carries it, an
untagged boot never lands on the reserved node (not even as the last free
node) and a tagged one does. The control: the same trait written to the
provider itself (what a reporter writing Placement does) is gone after
nova-compute's next push.
"""

import os
import time

import pytest

pytest.importorskip('nova')

import fixtures  # noqa: E402
from nova import context as nova_context  # noqa: E402

from tests import ironic_server  # noqa: E402
from tests.nova import base  # noqa: E402
from virt_capabilities import service  # noqa: E402

RESERVED = 'CUSTOM_TROVE'
TAG = {'trait:%s' % RESERVED: 'required'}
#: An inspection rule's trait, on every node: never the reporter's.
INSPECTED = 'CUSTOM_INSPECTED'
ISOLATION = {('image_isolation', 'enabled'): True,
             ('image_isolation', 'rules'): [RESERVED],
             ('scheduler', 'filter_hosts_by_image_type_support'): True}
#: A flavor for a whole ironic node, as Nova documents it.
BAREMETAL_FLAVOR = {'resources:CUSTOM_BAREMETAL': '1',
                    'resources:VCPU': '0', 'resources:MEMORY_MB': '0',
                    'resources:DISK_GB': '0'}
SAFETY_TIMEOUT = 120


class TestReservedIronicNode(base.InsideNova):
    compute_driver = 'ironic.IronicDriver'
    scheduler_options = dict(ISOLATION)

    def setUp(self):
        self.ironic = ironic_server.IronicServer()
        self.ironic.start()
        self.addCleanup(self.ironic.stop)
        # Two free nodes and one to reserve, each with an inspection's
        # trait, before nova-compute starts.
        self.free = [self.ironic.enroll('free-%d' % i, traits=(INSPECTED,))
                     for i in range(2)]
        self.reserved = self.ironic.enroll('trove-0', traits=(INSPECTED,))
        super().setUp()
        self.flavor = self._create_flavor(
            memory_mb=8192, vcpu=4, disk=100, extra_spec=BAREMETAL_FLAVOR)
        # Every node has its provider, with nova-compute's own traits.
        for node in self.free + [self.reserved]:
            self.assertIn('COMPUTE_NODE', self.provider_traits(node))

    def _setup_compute_service(self):
        # nova.conf of an ironic nova-compute reaching this Ironic.
        self.flags(auth_type='none', endpoint_override=self.ironic.endpoint,
                   api_retry_interval=1, group='ironic')
        self.flags(resource_provider_association_refresh=1, group='compute')
        return super()._setup_compute_service()

    # -- helpers ---------------------------------------------------------

    def provider_traits(self, node):
        return set(self._get_provider_traits(node))

    def reportclient(self):
        return self.compute.manager.rt.reportclient

    def refreshed_at(self, node):
        return self.reportclient()._association_refresh_time.get(node, 0)

    def push_until(self, done, what):
        """nova-compute's periodic resource update, again and again, until
        ``done()`` (a read of Placement) holds."""
        ctx = nova_context.get_admin_context()
        deadline = time.monotonic() + SAFETY_TIMEOUT
        while time.monotonic() < deadline:
            self.compute.manager.update_available_resource(ctx)
            if done():
                return
        self.fail('never happened: %s' % what)

    def push_past_a_refresh(self, node):
        """Periodic updates until nova-compute has re-read the node's
        provider from Placement (its refresh interval passed) and pushed
        its own view once more."""
        before = self.refreshed_at(node)
        self.push_until(lambda: self.refreshed_at(node) > before,
                        'nova-compute refreshed provider %s' % node)
        ctx = nova_context.get_admin_context()
        self.compute.manager.update_available_resource(ctx)

    def run_reporter(self, nodes, custom_traits=RESERVED):
        """The reporter, once, on this ironic nova-compute's nova.conf
        (the same file and state each time)."""
        if not hasattr(self, 'reporter_dir'):
            self.reporter_dir = self.useFixture(fixtures.TempDir()).path
        workdir = self.reporter_dir
        path = os.path.join(workdir, 'nova.conf')
        with open(path, 'w') as f:
            f.write('[DEFAULT]\ncompute_driver = ironic.IronicDriver\n'
                    'state_path = %s\n[virt_capabilities]\n'
                    'custom_traits = %s\n%s'
                    '[placement]\nauth_type = admin_token\nendpoint = %s\n'
                    'token = admin\n' % (workdir, custom_traits,
                                         self.ironic.nova_conf_section(),
                                         self.placement.fixture.endpoint))
        return service.run_once(
            lambda: service.ReportJob([path], list(nodes)), 0)

    def boot_on_ironic(self, image, expected='ACTIVE'):
        server = self._build_server(image_uuid=image, flavor_id=self.flavor,
                                    networks='none')
        server = self.api.post_server({'server': server})
        return self._wait_for_state_change(server, expected)

    def node_of(self, server):
        return server['OS-EXT-SRV-ATTR:hypervisor_hostname']

    # -- the tests -------------------------------------------------------

    def test_reserved_node_stays_reserved(self):
        self.assertEqual(0, self.run_reporter([self.reserved]))
        self.assertEqual({INSPECTED, RESERVED},
                         self.ironic.traits(self.reserved))
        # nova-compute copies it from the node at its next update ...
        self.push_until(
            lambda: RESERVED in self.provider_traits(self.reserved),
            'nova-compute copied %s to the provider' % RESERVED)
        # ... and keeps it across its own refresh and push.
        self.push_past_a_refresh(self.reserved)
        self.assertEqual(0, self.run_reporter([self.reserved]))
        self.push_past_a_refresh(self.reserved)
        traits = self.provider_traits(self.reserved)
        self.assertIn(RESERVED, traits)
        self.assertIn(INSPECTED, traits)    # the node's own, kept
        self.assertIn('COMPUTE_NODE', traits)
        self.assertNotIn(RESERVED, self.provider_traits(self.free[0]))

        # Untagged boots take the free nodes, never the reserved one, not
        # even when it is the last node left.
        image = self.image('raw')
        nodes = {self.node_of(self.boot_on_ironic(image)) for _ in range(2)}
        self.assertEqual(set(self.free), nodes)
        failed = self.boot_on_ironic(image, expected='ERROR')
        self.assertIn('No valid host', failed['fault']['message'])
        # A tagged one lands on it.
        tagged = self.boot_on_ironic(self.image('raw', **TAG))
        self.assertEqual(self.reserved, self.node_of(tagged))

    def test_a_trait_written_to_the_provider_is_removed(self):
        """The control: what nova-compute does to a trait written to an
        ironic node's provider, the push the test above survives."""
        uuid = self.reserved
        self.placement.put('/traits/%s' % RESERVED, None, version='1.6')
        current = self.placement.get(
            '/resource_providers/%s/traits' % uuid, version='1.6').body
        self.placement.put(
            '/resource_providers/%s/traits' % uuid,
            {'traits': current['traits'] + [RESERVED],
             'resource_provider_generation':
                 current['resource_provider_generation']}, version='1.6')
        self.assertIn(RESERVED, self.provider_traits(uuid))
        self.push_past_a_refresh(uuid)
        self.assertNotIn(RESERVED, self.provider_traits(uuid))
        self.assertIn(INSPECTED, self.provider_traits(uuid))

    def test_the_reporter_drops_only_its_own_from_the_node(self):
        self.assertEqual(0, self.run_reporter([self.reserved]))
        self.push_until(
            lambda: RESERVED in self.provider_traits(self.reserved),
            'nova-compute copied %s to the provider' % RESERVED)
        self.assertEqual(0, self.run_reporter([self.reserved],
                                              custom_traits=''))
        self.assertEqual({INSPECTED}, self.ironic.traits(self.reserved))
        self.push_until(
            lambda: RESERVED not in self.provider_traits(self.reserved),
            'nova-compute removed %s from the provider' % RESERVED)
        self.assertIn(INSPECTED, self.provider_traits(self.reserved))


