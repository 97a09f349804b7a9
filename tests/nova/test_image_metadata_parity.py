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

"""The image-metadata prefilter against Nova's own, on Nova's code.

First the parity table (``tests/nova/image_metadata_parity.md``, made by
``tests/nova/parity.py``): what Nova's ``transform_image_metadata`` and ours
put in a Nova ``RequestSpec`` for each image-property combination, and why
they differ. Then servers booted through Nova's functional harness onto
three fake computes whose providers carry the traits real drivers report:
each image lands on a host the table allows, and with Nova's own prefilter
instead, the same images go where the table says Nova sends them.
"""

import os
import types

import pytest

pytest.importorskip('nova')

from nova.virt import fake  # noqa: E402
from nova.virt.libvirt import driver as libvirt_driver  # noqa: E402

from image_type_common import image_metadata  # noqa: E402
from tests.nova import base  # noqa: E402
from tests.nova import parity  # noqa: E402

# -- the table -------------------------------------------------------------


def test_the_checked_in_table_is_what_nova_and_ours_do():
    fresh = parity.render()
    if os.environ.get(parity.REGENERATE_ENV):
        parity.write_table(fresh)
    assert parity.read_table() == fresh, (
        '%s is out of date; regenerate it: %s=1 python -m pytest %s, or '
        'python -m tests.nova.parity' % (parity.TABLE, parity.REGENERATE_ENV,
                                         __file__))


def test_every_difference_is_explained_without_our_code():
    unexplained = ['%s: %s' % (row.given, text) for row in parity.rows()
                   for kind, text in row.reasons
                   if kind == parity.UNEXPLAINED]
    assert unexplained == []
    assert sum(1 for row in parity.rows() if not row.rejected) > 150


def test_every_enum_value_of_every_property_is_a_row():
    given = [row.given for row in parity.rows()]
    for prop in parity.PROPERTIES:
        values = parity.enum_values(prop)
        assert len(values) > 3
        for value in values:
            assert {prop: value} in given


def test_the_catalogue_accepts_exactly_the_installed_novas_values():
    for prop in parity.PROPERTIES:
        family = image_metadata.FAMILY_BY_PROPERTY[prop]
        assert sorted(family.values) == sorted(parity.enum_values(prop)), prop


def _libvirt(dom_caps=(), cpu_arch='x86_64'):
    """Just enough of a libvirt host for two of Nova's trait methods."""
    cpu = types.SimpleNamespace(arch=cpu_arch)
    host = types.SimpleNamespace(
        get_domain_capabilities=lambda: dict.fromkeys(dom_caps, {}),
        has_min_version=lambda version: True,
        get_capabilities=lambda: types.SimpleNamespace(
            host=types.SimpleNamespace(cpu=cpu)))
    return types.SimpleNamespace(_host=host)


def test_the_renamed_traits_are_what_novas_libvirt_driver_reports():
    # Nova's own libvirt driver names vIOMMU traits COMPUTE_VIOMMU_MODEL_X,
    # which its prefilter asks for as COMPUTE_VIOMMU_X.
    reported = libvirt_driver.LibvirtDriver._get_iommu_model_traits(
        _libvirt(dom_caps=('x86_64', 'aarch64')))
    assert all(reported.values())
    table = {next(iter(parity.fact('hw_viommu_model', v).required))
             for v in parity.enum_values('hw_viommu_model')}
    assert set(reported) == table
    # On an armv7l host the same driver computes HW_ARCH_ARMV7L, finds it
    # is no trait and reports no HW_ARCH_* at all.
    assert libvirt_driver.LibvirtDriver._get_cpu_arch_traits(
        _libvirt(cpu_arch='armv7l')) == {'HW_ARCH_ARMV7L': False}


# -- servers booted through Nova ----------------------------------------


# A subset of what Nova's libvirt driver reports for KVM on each CPU (the
# aarch64 host has no x86_64 emulator, so no COMPUTE_VIOMMU_MODEL_INTEL and
# no IDE or floppy bus); VMware's driver reports HW_ARCH_X86_64 only.
LIBVIRT = ('COMPUTE_STORAGE_BUS_VIRTIO', 'COMPUTE_STORAGE_BUS_SCSI',
           'COMPUTE_STORAGE_BUS_SATA', 'COMPUTE_STORAGE_BUS_USB',
           'COMPUTE_NET_VIF_MODEL_VIRTIO', 'COMPUTE_NET_VIF_MODEL_E1000',
           'COMPUTE_GRAPHICS_MODEL_VIRTIO', 'COMPUTE_GRAPHICS_MODEL_VGA',
           'COMPUTE_VIOMMU_MODEL_AUTO', 'COMPUTE_VIOMMU_MODEL_VIRTIO')
#: host -> (the guests it lists in supported_instances, which
#: ImagePropertiesFilter reads; its traits).
HOSTS = {
    'kvm-x86': ((('i686', 'kvm', 'hvm'), ('x86_64', 'kvm', 'hvm')), (
        *LIBVIRT, 'COMPUTE_STORAGE_BUS_IDE', 'COMPUTE_STORAGE_BUS_FDC',
        'HW_ARCH_X86_64', 'COMPUTE_ARCH_X86_64',
        'COMPUTE_VIOMMU_MODEL_INTEL')),
    'kvm-arm': ((('aarch64', 'kvm', 'hvm'),), (
        *LIBVIRT, 'HW_ARCH_AARCH64', 'COMPUTE_ARCH_AARCH64',
        'COMPUTE_VIOMMU_MODEL_SMMUV3')),
    # supported_instances: nova/virt/vmwareapi/host.py; the trait: the
    # VMware driver's update_provider_tree.
    'vmware': ((('i686', 'vmware', 'hvm'), ('x86_64', 'vmware', 'hvm')),
               ('HW_ARCH_X86_64',)),
}
#: The roomiest host: the weighers send every boot there unless a
#: constraint keeps it away.
ROOMIEST = 'vmware'

#: Rows of the table, and the hosts that can take them, written out.
BOOTS = [
    # An x86_64 host runs i686 guests; Nova's prefilter wants HW_ARCH_I686.
    ({'hw_architecture': 'i686'}, {'kvm-x86', 'vmware'}),
    ({'architecture': 'amd64'}, {'kvm-x86', 'vmware'}),
    ({'hw_architecture': 'aarch64'}, {'kvm-arm'}),
    # Nova asks for COMPUTE_VIOMMU_INTEL, no trait, and drops it.
    ({'hw_viommu_model': 'intel'}, {'kvm-x86'}),
    ({'hw_viommu_model': 'smmuv3'}, {'kvm-arm'}),
    ({'hw_viommu_model': 'intel', 'hw_architecture': 'x86_64'},
     {'kvm-x86'}),
    # COMPUTE_ARCH_I686 is no trait: that property adds nothing, the bus
    # still counts (Nova drops both).
    ({'hw_emulation_architecture': 'i686', 'hw_disk_bus': 'scsi'},
     {'kvm-x86', 'kvm-arm'}),
    ({'hw_emulation_architecture': 'armv7l', 'hw_architecture': 'aarch64'},
     {'kvm-arm'}),
    ({'hw_architecture': 'i686', 'hw_disk_bus': 'scsi'}, {'kvm-x86'}),
    ({'hw_cdrom_bus': 'ide'}, {'kvm-x86'}),
    ({'hw_video_model': 'vga', 'hw_vif_model': 'e1000'},
     {'kvm-x86', 'kvm-arm'}),
    # No host reports vmxnet3 (VMware's driver boots it but reports no VIF
    # trait): "No valid host", naming the trait and the property.
    ({'hw_vif_model': 'vmxnet3', 'hw_video_model': 'vmvga',
      'hw_emulation_architecture': 'i686'}, set()),
]


def table_row(properties):
    for row in parity.rows():
        if row.given == properties:
            return row
    raise AssertionError('%s is not a row of the table' % properties)


class _ThreeHosts(base.InsideNova):
    """An x86_64 libvirt-like host, an aarch64 one and a VMware-like one,
    their traits written to Placement the way an operator or a reporter
    writes them (added to what nova-compute set)."""

    def _setup_scheduler_service(self):
        # Only free RAM weighs, so which allowed host a boot lands on is
        # known (with all of Nova's weighers, one boot on the roomiest host
        # moved the next one elsewhere).
        self.flags(weight_classes=['nova.scheduler.weights.ram.RAMWeigher'],
                   group='filter_scheduler')
        return super()._setup_scheduler_service()

    def _setup_compute_service(self):
        # Nova loads drivers only from nova.virt: each host is Nova's
        # MediumFakeDriver, told which guests it runs (and the roomiest,
        # its size) before its first resource update reports them.
        compute = None
        for host, (guests, _) in HOSTS.items():
            compute = self._start_compute(host)
            driver = compute.manager.driver
            driver.host_status_base['supported_instances'] = [
                list(guest) for guest in guests]
            if host == ROOMIEST:
                driver.vcpus, driver.memory_mb = 20, 16384
                driver.resources = fake.Resources(
                    vcpus=20, memory_mb=16384, local_gb=driver.local_gb)
        return compute

    def setUp(self):
        super().setUp()
        self.flags(instances=50, cores=100, ram=100 * 1024, group='quota')
        self._run_periodics()
        self.uuids = {h: self._get_provider_uuid_by_host(h) for h in HOSTS}
        for host, (_, traits) in HOSTS.items():
            self.add_traits(self.uuids[host], traits)
        # nova-compute keeps traits it does not own: through its periodic
        # resource update, and when the service is disabled and enabled
        # again (it rewrites the provider's traits then).
        for status in ('disabled', 'enabled'):
            for host in HOSTS:
                (service,) = self.api.get_services(binary='nova-compute',
                                                   host=host)
                self.api.put_service(service['id'], {'status': status})
            self._run_periodics()
        self.traits = {}
        for host, (_, traits) in HOSTS.items():
            self.traits[host] = set(self._get_provider_traits(
                self.uuids[host]))
            self.assertLessEqual(set(traits), self.traits[host], host)
            self.assertNotIn('COMPUTE_STATUS_DISABLED', self.traits[host])

    def add_traits(self, uuid, traits):
        path = '/resource_providers/%s/traits' % uuid
        now = self.placement.get(path, version='1.6').body
        self.placement.put(path, {
            'resource_provider_generation':
                now['resource_provider_generation'],
            'traits': sorted(set(now['traits']) | set(traits))},
            version='1.6')

    def boot_image(self, properties, expected='ACTIVE'):
        return self.boot(self.image('raw', **properties), expected=expected)

    def allowed(self, row):
        """The hosts whose traits meet what ours asks for the row."""
        return {host for host, traits in self.traits.items()
                if row.ours_required <= traits
                and not row.ours_forbidden & traits}


class TestBootsLandWhereTheTableSays(_ThreeHosts):
    scheduler_options = {('image_metadata_prefilter', 'families'):
                         list(image_metadata.NAMES)}

    def test_each_image_lands_on_a_host_the_table_allows(self):
        # Unconstrained, a boot goes to the roomiest host.
        self.assertEqual(ROOMIEST, self.host_of(self.boot_image({})))
        for properties, hosts in BOOTS:
            with self.subTest(properties=properties):
                row = table_row(properties)
                self.assertEqual(hosts, self.allowed(row))
                if hosts:
                    server = self.boot_image(properties)
                    self.assertIn(self.host_of(server), hosts)
                    continue
                failed = self.boot_image(properties, expected='ERROR')
                message = failed['fault']['message']
                self.assertIn('No valid host', message)
                self.assertIn('COMPUTE_NET_VIF_MODEL_VMXNET3', message)
                self.assertIn('hw_vif_model=vmxnet3', message)

    def test_volume_backed_boots_read_the_volumes_image(self):
        server = self._create_server_boot_from_volume(
            image_args={'properties': {'hw_viommu_model': 'smmuv3'}},
            networks='none')
        self.assertEqual('kvm-arm', self.host_of(server))


class TestNovasOwnPrefilter(_ThreeHosts):
    """Nova's ``[scheduler] image_metadata_prefilter`` alone, ours off:
    the same images go where the table says Nova sends them."""

    scheduler_options = {('scheduler', 'image_metadata_prefilter'): True}

    def test_novas_prefilter_refuses_i686_and_drops_the_rest(self):
        i686 = {'hw_architecture': 'i686'}
        self.assertEqual({'HW_ARCH_I686'}, table_row(i686).nova_required)
        failed = self.boot_image(i686, expected='ERROR')
        self.assertIn('No valid host', failed['fault']['message'])
        # Nothing required: the roomiest host, which reports neither a
        # vIOMMU model nor a storage bus.
        for dropped in ({'hw_viommu_model': 'intel'},
                        {'hw_emulation_architecture': 'i686',
                         'hw_disk_bus': 'scsi'}):
            self.assertEqual(frozenset(), table_row(dropped).nova_required)
            self.assertEqual('vmware',
                             self.host_of(self.boot_image(dropped)))


# -- hosts that report no HW_ARCH_* trait ----------------------------------


class _ArchHosts(base.InsideNova):
    """Computes that each run the guests ``hosts`` lists (the
    supported_instances ImagePropertiesFilter reads); those with traits get
    them on their provider, the others carry no HW_ARCH_* trait, as
    devstack's fake driver, ironic and z/VM."""

    scheduler_options = {('image_metadata_prefilter', 'families'):
                         ['architecture']}
    #: host -> (its supported_instances, traits added to its provider).
    hosts = {}

    def _setup_compute_service(self):
        compute = None
        for host, (guests, _) in self.hosts.items():
            compute = self._start_compute(host)
            compute.manager.driver.host_status_base['supported_instances'] = [
                list(guest) for guest in guests]
        return compute

    def setUp(self):
        super().setUp()
        self._run_periodics()
        for host, (_, traits) in self.hosts.items():
            uuid = self._get_provider_uuid_by_host(host)
            _ThreeHosts.add_traits(self, uuid, traits)
            self.assertEqual(bool(traits), any(
                t.startswith('HW_ARCH_')
                for t in self._get_provider_traits(uuid)), host)

    def boot_arch(self, arch, expected='ACTIVE'):
        return self.boot(self.image('raw', hw_architecture=arch),
                         expected=expected)


#: Nova's fake driver's own supported_instances (nova/virt/fake.py).
FAKE_GUESTS = (('x86_64', 'fake', 'hvm'),)
KVM_X86 = ((('i686', 'kvm', 'hvm'), ('x86_64', 'kvm', 'hvm')),
           ('HW_ARCH_X86_64',))


class TestAnArchNoHostRuns(_ArchHosts):
    """devstack's layout: a fake-driver host with no HW_ARCH_* trait (and
    here an x86_64 host that has one). An s390x image fails with a fault
    naming HW_ARCH_S390X (Nova's records say the fake host runs x86_64
    guests only, so ImagePropertiesFilter would refuse it), not with
    Nova's bare one."""

    hosts = {'kvm-x86': KVM_X86, 'fake': (FAKE_GUESTS, ())}

    def test_the_fault_names_the_trait_property_and_family(self):
        failed = self.boot_arch('s390x', expected='ERROR')
        message = failed['fault']['message']
        self.assertEqual(
            'No valid host was found. Scheduling failed: No compute host '
            'reports HW_ARCH_S390X, which the image needs for '
            'hw_architecture=s390x, image_metadata_prefilter family '
            'architecture; the 1 host(s) with no HW_ARCH_* trait run only '
            'x86_64 guests.', message)
        # What the hosts run still boots, the fake host included.
        self.assertIn(self.host_of(self.boot_arch('x86_64')),
                      {'kvm-x86', 'fake'})


class TestAHostWithoutTheTraitRunsIt(_ArchHosts):
    """A z/VM-like host (no HW_ARCH_* trait, s390x guests) beside the fake
    one: the s390x image lands on it."""

    hosts = {'kvm-x86': KVM_X86, 'fake': (FAKE_GUESTS, ()),
             'zvm': ((('s390x', 'zvm', 'hvm'),), ())}

    def test_the_image_lands_on_the_host_that_runs_it(self):
        self.assertEqual('zvm', self.host_of(self.boot_arch('s390x')))


class TestEveryHostReportsAnotherArch(_ArchHosts):
    """Every host reports an HW_ARCH_* trait and none HW_ARCH_S390X."""

    hosts = {'kvm-x86': KVM_X86,
             'kvm-arm': ((('aarch64', 'kvm', 'hvm'),), ('HW_ARCH_AARCH64',))}

    def test_the_fault_names_the_trait(self):
        message = self.boot_arch('s390x', expected='ERROR')['fault'][
            'message']
        self.assertEqual(
            'No valid host was found. Scheduling failed: No compute host '
            'reports HW_ARCH_S390X, which the image needs for '
            'hw_architecture=s390x, image_metadata_prefilter family '
            'architecture; each one reports another HW_ARCH_* trait.',
            message)


class TestWithoutImagePropertiesFilter(_ArchHosts):
    """Without ImagePropertiesFilter nothing in Nova checks a host's
    architecture: ours refuses nothing Nova would place, and the s390x
    image goes to the host with no HW_ARCH_* trait as before."""

    hosts = TestAnArchNoHostRuns.hosts
    scheduler_options = {
        **_ArchHosts.scheduler_options,
        ('filter_scheduler', 'enabled_filters'): [
            'ComputeFilter', 'ImageTypeRebuildFilter']}

    def test_nova_places_it(self):
        self.assertEqual('fake', self.host_of(self.boot_arch('s390x')))
