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

"""Image-metadata traits beside nova-compute: it leaves them, we leave its.

Nova's own functional harness runs a compute node of each driver the
metadata table serves, with the reporter (this project's code, unpatched,
through ``service.ReportJob`` on a nova.conf) beside it.

What is real: nova-api, conductor, scheduler and nova-compute (its manager,
resource tracker and report client, ``update_available_resource``), Placement
(Placement's own fixture), and the virt drivers themselves:

* **VMware.** The real ``VMwareVCDriver``: its capabilities, ``init_host``,
  ``get_available_resource`` and ``update_provider_tree``. Stubbed: vCenter,
  by Nova's own fake vSphere API from its unit tests
  (``nova.tests.unit.virt.vmwareapi.fake`` with ``stubs.set_stubs``, set up
  as ``test_driver_api`` does), and the driver's extension registration in
  vCenter (a no-op, as Nova's unit tests mock it).
* **libvirt on armv7l.** The real ``LibvirtDriver`` under Nova's libvirt
  test base (``nova.tests.functional.libvirt.base.ServersTestBase``, with
  its stubs: fake libvirt connection, image backend, disk and CPU counts).
  The fake libvirt describes the host from ``os.uname()``, which Nova's
  fixture mocks; here it says ``armv7l``, so ``static_traits`` (CPU, storage
  bus, VIF, graphics, vIOMMU traits) are Nova's own computation for an
  armv7l host. Nova's fake armv7l host description has no CPU topology
  (marked incomplete there), so the resource tracker could not run: the
  test gives it a complete one shaped like Nova's aarch64 host. The
  reporter reads the same ``os.uname()``, as it would on that host.

What is proven, for both: nova-compute alone writes none of these traits;
after the reporter adds them, nova-compute's periodic update keeps them
when it writes a trait of its own from a stale cache (the service disabled:
COMPUTE_STATUS_DISABLED; its write conflicts, is retried on a fresh read)
and when it re-reads the provider every cycle (cache cleared, what SIGHUP
or the refresh interval does), and the two settle (the provider generation
stops changing); the reporter leaves every trait nova-compute wrote. For
VMware, switching the option off removes exactly what the reporter set;
for libvirt, a restarted nova-compute leaves it, and an x86_64 host gets
nothing from the reporter.
"""

import pytest

pytest.importorskip('nova')
pytest.importorskip('oslo_vmware')

import fixtures  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova import objects  # noqa: E402
from nova.tests.fixtures import libvirt as fakelibvirt  # noqa: E402
from nova.tests.fixtures import libvirt_data  # noqa: E402
from nova.tests.functional.libvirt import base as libvirt_base  # noqa: E402
from nova.tests.unit.virt.vmwareapi import fake as vmware_fake  # noqa: E402
from nova.tests.unit.virt.vmwareapi import stubs as vmware_stubs  # noqa: E402
from nova.virt import driver as nova_driver  # noqa: E402

from tests.nova import base  # noqa: E402
from virt_capabilities import metadata_traits  # noqa: E402

VMWARE_METADATA = frozenset({
    # Nova 34's VMware driver boots these and never reports them (see
    # tests/unit/virt_capabilities/test_metadata_traits.py for where).
    'COMPUTE_STORAGE_BUS_IDE', 'COMPUTE_STORAGE_BUS_SCSI',
    'COMPUTE_NET_VIF_MODEL_E1000', 'COMPUTE_NET_VIF_MODEL_E1000E',
    'COMPUTE_NET_VIF_MODEL_PCNET', 'COMPUTE_NET_VIF_MODEL_SRIOV',
    'COMPUTE_NET_VIF_MODEL_VMXNET', 'COMPUTE_NET_VIF_MODEL_VMXNET3',
    'COMPUTE_GRAPHICS_MODEL_VMVGA'})
CYCLES = 4


def nova_capability_traits(driver_class):
    """What the resource tracker sets from the driver's capabilities."""
    return {t for t, on in nova_driver.ComputeDriver.capabilities_as_traits(
        driver_class).items() if on}


class SideBySide:
    """Cycles of reporter then nova-compute's periodic update."""

    def provider(self, uuid):
        return (set(self._get_provider_traits(uuid)),
                self._get_resource_provider_by_uuid(uuid)['generation'])

    def cycles(self, compute, uuid, report):
        generations = []
        for _ in range(CYCLES):
            self.assertEqual(0, report())
            compute.manager.rt.reportclient.clear_provider_cache()
            self._run_periodics(raise_on_error=True)
            generations.append(self.provider(uuid)[1])
        return generations


class TestVMwareBesideNovaCompute(SideBySide, base.InsideNova):
    compute_driver = 'vmwareapi.VMwareVCDriver'

    def _setup_compute_service(self):
        # What Nova's own VMware unit tests do (test_driver_api setUp).
        self.flags(cluster_name='test_cluster', host_ip='127.0.0.1',
                   host_username='test_username', host_password='test_pass',
                   api_retry_count=1, use_linked_clone=False, group='vmware')
        self.flags(enabled=False, group='vnc')
        vmware_stubs.set_stubs(self)
        vmware_fake.reset()
        self.stub_out('nova.virt.vmwareapi.driver.VMwareVCDriver.'
                      '_register_openstack_extension', lambda *a, **k: None)
        return super()._setup_compute_service()

    def report(self, uuid, extra=''):
        return self.run_reporter('compute', extra,
                                 driver='vmwareapi.VMwareVCDriver',
                                 providers=[uuid], workdir=self.workdir)

    def test_nova_compute_leaves_them_and_we_leave_its_own(self):
        from nova.virt.vmwareapi import driver as vmware_driver
        self.workdir = self.useFixture(fixtures.TempDir()).path
        driver = self.compute.manager.driver
        self.assertIsInstance(driver, vmware_driver.VMwareVCDriver)
        uuid = self._get_provider_uuid_by_host(driver._nodename)
        nova_traits, _ = self.provider(uuid)
        # nova-compute alone: VMware's own trait and its capability traits,
        # none of the metadata ones.
        self.assertIn('HW_ARCH_X86_64', nova_traits)
        self.assertIn('COMPUTE_NODE', nova_traits)
        self.assertLessEqual(
            nova_capability_traits(vmware_driver.VMwareVCDriver), nova_traits)
        self.assertEqual(set(), nova_traits & metadata_traits.ALL_TRAITS)

        # The reporter adds them; nova-compute, its cache now stale, has a
        # trait of its own to write (the service disabled: the periodic
        # adds COMPUTE_STATUS_DISABLED). Its write, from the stale view,
        # conflicts (409), is retried on a fresh read, and keeps ours.
        self.assertEqual(0, self.report(uuid))
        ctxt = nova_context.get_admin_context()
        service = objects.Service.get_by_compute_host(ctxt, 'compute')
        service.disabled = True
        service.save()
        self._run_periodics(raise_on_error=True)
        self.assertIn('Got 409', self.stdlog.logger.output)
        traits, _ = self.provider(uuid)
        self.assertEqual(nova_traits | VMWARE_METADATA
                         | {'COMPUTE_STATUS_DISABLED'}, traits)

        # Cycles of both, nova-compute re-reading the provider every time:
        # nothing changes any more (the reporter leaves nova-compute's
        # traits, COMPUTE_STATUS_DISABLED included, and nova-compute ours).
        generations = self.cycles(self.compute, uuid,
                                  lambda: self.report(uuid))
        self.assertEqual(1, len(set(generations)), generations)
        self.assertEqual(traits, self.provider(uuid)[0])

        # Switched off: the reporter removes what it set, nothing else, and
        # nova-compute does not bring any back.
        self.assertEqual(0, self.report(
            uuid, '[virt_capabilities]\nimage_metadata_traits = False\n'))
        self.compute.manager.rt.reportclient.clear_provider_cache()
        self._run_periodics(raise_on_error=True)
        self.assertEqual(traits - VMWARE_METADATA, self.provider(uuid)[0])


ARMV7L = 'armv7l'
#: Nova's fake libvirt describes an armv7l host without CPU topology ("This
#: is incomplete", libvirt_data.py), on which the resource tracker cannot
#: run (Host.has_hyperthreading reads it); a complete one, shaped like
#: Nova's own aarch64 host, with the fake's usual placeholders.
ARMV7L_HOST = """
  <host>
    <uuid>cef19ce0-0ca2-11df-855d-b19fbce37686</uuid>
    <cpu>
      <arch>armv7l</arch>
      <model>host</model>
      <topology sockets='%(sockets)s' cores='%(cores)s' threads='%(threads)s'/>
      <pages unit='KiB' size='4'/>
    </cpu>
    <power_management/>
    <migration_features>
      <live/>
      <uri_transports>
        <uri_transport>tcp</uri_transport>
      </uri_transports>
    </migration_features>
    %(topology)s
    <secmodel>
      <model>dac</model>
      <doi>0</doi>
    </secmodel>
  </host>"""


class TestLibvirtArmv7lBesideNovaCompute(SideBySide,
                                         libvirt_base.ServersTestBase):
    def _clear_attrs(self):
        pass  # see tests/nova/base.py

    def _setup_scheduler_service(self):
        self.flags(api_paste_config=base.API_PASTE, group='wsgi')
        return super()._setup_scheduler_service()

    def run_reporter(self, uuid, extra=''):
        return base.run_reporter(self, 'arm7', extra,
                                 driver='libvirt.LibvirtDriver',
                                 providers=[uuid], workdir=self.workdir)

    def test_hw_arch_armv7_beside_the_real_libvirt_driver(self):
        self.workdir = self.useFixture(fixtures.TempDir()).path
        self.libvirt.mock_uname.return_value = fakelibvirt.os_uname(
            'Linux', '', '5.4.0-0-generic', '', ARMV7L)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt_data.CAPABILITIES_HOST_TEMPLATES',
            dict(libvirt_data.CAPABILITIES_HOST_TEMPLATES,
                 **{ARMV7L: ARMV7L_HOST})))
        self.start_compute('arm7')
        compute = self.computes['arm7']
        driver = compute.manager.driver
        self.assertEqual(ARMV7L, driver._host.get_capabilities().host.cpu.arch)
        static = driver.static_traits
        # Nova's own answer on armv7l: no HW_ARCH_* at all, set or unset.
        self.assertEqual([], [t for t in static if t.startswith('HW_ARCH_')])
        self.assertEqual({'HW_ARCH_ARMV7L': False},
                         driver._get_cpu_arch_traits())
        uuid = self.compute_rp_uuids['arm7']
        nova_traits, _ = self.provider(uuid)
        self.assertEqual(set(), {t for t in nova_traits
                                 if t.startswith('HW_ARCH_')})
        # The families nova-compute does own here are reported (and some
        # of them unset): the reporter must never touch them.
        owned_by_nova = {t for t in static
                         if t.startswith(('COMPUTE_STORAGE_BUS_',
                                          'COMPUTE_NET_VIF_MODEL_',
                                          'COMPUTE_GRAPHICS_MODEL_'))}
        self.assertTrue(owned_by_nova)
        self.assertEqual({t for t in owned_by_nova if static[t]},
                         nova_traits & owned_by_nova)

        # Added; then nova-compute writes from its stale cache (service
        # disabled), conflicts, re-reads, and keeps it.
        self.assertEqual(0, self.run_reporter(uuid))
        ctxt = nova_context.get_admin_context()
        service = objects.Service.get_by_compute_host(ctxt, 'arm7')
        service.disabled = True
        service.save()
        self._run_periodics(raise_on_error=True)
        traits, _ = self.provider(uuid)
        self.assertEqual(nova_traits | {'HW_ARCH_ARMV7',
                                        'COMPUTE_STATUS_DISABLED'}, traits)

        generations = self.cycles(compute, uuid,
                                  lambda: self.run_reporter(uuid))
        self.assertEqual(traits, self.provider(uuid)[0])
        self.assertEqual(1, len(set(generations)), generations)

        # A restart of nova-compute (a new driver, static traits computed
        # again) leaves it too.
        self.restart_compute_service('arm7')
        self._run_periodics(raise_on_error=True)
        self.assertEqual(traits, self.provider(uuid)[0])

    def test_on_x86_64_nothing_is_reported(self):
        self.workdir = self.useFixture(fixtures.TempDir()).path
        self.start_compute('arm7')  # Nova's fixture: an x86_64 host
        uuid = self.compute_rp_uuids['arm7']
        nova_traits, generation = self.provider(uuid)
        self.assertIn('HW_ARCH_X86_64', nova_traits)
        self.assertEqual(0, self.run_reporter(uuid))
        self.assertEqual((nova_traits, generation), self.provider(uuid))

