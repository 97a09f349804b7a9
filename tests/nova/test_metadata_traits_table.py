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

"""The image-metadata table checked against the installed Nova's own code.

Each VMware value is asked of the driver's modules (``convert_vif_model``,
``VMwareImage.from_image``), each trait name is the one Nova's own
prefilter computes for the image property (``transform_image_metadata``),
and none may be one nova-compute writes (``CAPABILITY_TRAITS_MAP``, the
resource tracker's own, what the drivers' ``update_provider_tree`` adds).
"""

import inspect
import types

import pytest

pytest.importorskip('nova')
pytest.importorskip('oslo_vmware')

import fixtures  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova import exception  # noqa: E402
from nova import objects  # noqa: E402
from nova import test  # noqa: E402
from nova.network import model as network_model  # noqa: E402
from nova.objects import fields  # noqa: E402
from nova.scheduler import request_filter  # noqa: E402
from nova.virt import arch as nova_arch  # noqa: E402
from nova.virt import driver as nova_driver  # noqa: E402
from nova.virt.vmwareapi import constants  # noqa: E402
from nova.virt.vmwareapi import images as vmware_images  # noqa: E402
from nova.virt.vmwareapi import vm_util  # noqa: E402
import os_traits  # noqa: E402

from tests.nova import virt_drivers  # noqa: E402
from virt_capabilities import drivers  # noqa: E402
from virt_capabilities import metadata_traits  # noqa: E402

VMWARE = 'vmwareapi.VMwareVCDriver'
LIBVIRT = 'libvirt.LibvirtDriver'


def table(driver, machine='x86_64', family=None):
    return {r.trait for r in drivers.DRIVERS[driver].metadata_rows(machine)
            if family is None or r.family == family}


class TestTableAgainstNova(test.NoDBTestCase):
    def _clear_attrs(self):
        pass  # see tests/nova/base.py

    def setUp(self):
        super().setUp()
        self.flags(image_metadata_prefilter=True, group='scheduler')
        objects.register_all()

    def prefilter(self, **properties):
        """The traits Nova's own prefilter requires for these properties,
        or None when it gives up (a name os-traits lacks)."""
        spec = objects.RequestSpec(
            image=objects.ImageMeta.from_dict({'properties': properties}))
        if not request_filter.transform_image_metadata(
                nova_context.get_admin_context(), spec):
            return None
        return spec.root_required

    def test_vif_models_are_those_convert_vif_model_accepts(self):
        accepted = set()
        for model in network_model.VIF_MODEL_ALL:
            try:
                vm_util.convert_vif_model(model)
            except exception.Invalid:
                continue
            accepted.add(model)
        self.assertEqual(len(vm_util.ALL_SUPPORTED_NETWORK_DEVICES),
                         len(accepted))
        expected = set()
        for model in accepted:
            expected |= self.prefilter(hw_vif_model=model)
        self.assertEqual(expected, table(VMWARE, family='vif_model'))

    def test_disk_buses_are_those_from_image_honours(self):
        def adapter(**properties):
            image = objects.ImageMeta.from_dict(
                {'disk_format': 'vmdk', 'properties': properties})
            return vmware_images.VMwareImage.from_image(
                None, None, image).adapter_type
        default = adapter()
        honoured = set()
        for bus in fields.DiskBus.ALL:
            for model in (None, *fields.SCSIModel.ALL):
                props = {'hw_disk_bus': bus}
                if model:
                    props['hw_scsi_model'] = model
                found = adapter(**props)
                if found != default and (
                        found == constants.ADAPTER_TYPE_IDE
                        or found in constants.SCSI_ADAPTER_TYPES):
                    honoured.add(bus)
        self.assertEqual({'ide', 'scsi'}, honoured)
        expected = set()
        for bus in honoured:
            expected |= self.prefilter(hw_disk_bus=bus)
            # hw_cdrom_bus has the same prefix: CD-ROMs go on IDE.
        self.assertEqual(expected, table(VMWARE, family='storage_bus'))
        self.assertEqual({'COMPUTE_STORAGE_BUS_IDE'},
                         self.prefilter(hw_cdrom_bus='ide'))
        # The legacy VMware property becomes hw_disk_bus: what this serves.
        self.assertEqual({'COMPUTE_STORAGE_BUS_SCSI'},
                         self.prefilter(vmware_adaptertype='lsiLogic'))
        self.assertEqual({'COMPUTE_STORAGE_BUS_IDE'},
                         self.prefilter(vmware_adaptertype='ide'))

    def test_cdroms_go_on_ide(self):
        """The VMware driver's own _attach_cdrom_to_vm, called with vCenter
        stood in: the controller it asks for is IDE."""
        from nova.virt.vmwareapi import vmops
        asked, reconfigured = [], []

        def allocate(client_factory, devices, adapter_type):
            asked.append(adapter_type)
            return 200, 0, None
        for name, stand_in in (
                ('allocate_controller_key_and_unit_number', allocate),
                ('get_hardware_devices', lambda session, vm_ref: []),
                ('get_cdrom_attach_config_spec',
                 lambda *args: types.SimpleNamespace(deviceChange=[])),
                ('reconfigure_vm',
                 lambda session, vm_ref, spec: reconfigured.append(vm_ref))):
            self.useFixture(fixtures.MonkeyPatch(
                'nova.virt.vmwareapi.vm_util.' + name, stand_in))
        ops = object.__new__(vmops.VMwareVMOps)
        ops._session = types.SimpleNamespace(vim=types.SimpleNamespace(
            client=types.SimpleNamespace(factory=object())))
        ops._attach_cdrom_to_vm('vm-1', None, 'datastore1',
                                '[datastore1] config-drive.iso')
        self.assertEqual([constants.ADAPTER_TYPE_IDE], asked)
        self.assertEqual(['vm-1'], reconfigured)

    def test_video_is_vsphere_card_the_driver_never_chooses(self):
        """The driver's own extra specs and video card spec, called for
        every video model Nova knows: the same vSphere card
        (VirtualMachineVideoCard, which Nova's fields call vmvga) each
        time. That no module of the driver reads hw_video_model at all, on
        any path, only its text can say: that part reads the source."""
        import pkgutil

        import nova.virt.vmwareapi as package
        from nova.virt.vmwareapi import vmops
        for info in pkgutil.iter_modules(package.__path__):
            module = __import__('nova.virt.vmwareapi.' + info.name,
                                fromlist=['_'])
            self.assertNotIn('hw_video_model', inspect.getsource(module),
                             info.name)

        class Factory:
            """vCenter's client factory: records what is created."""

            def __init__(self):
                self.created = []

            def create(self, name):
                self.created.append(name)
                return types.SimpleNamespace()

        ops = object.__new__(vmops.VMwareVMOps)
        flavor = objects.Flavor(vcpus=1, memory_mb=512, extra_specs={
            'hw_video:ram_max_mb': '64'})

        def video_card(**properties):
            image = objects.ImageMeta.from_dict({'properties': dict(
                hw_video_ram=8, **properties)})
            factory = Factory()
            spec = vm_util.create_video_card_spec(
                factory, ops._get_extra_specs(flavor, image))
            return factory.created, spec.device.videoRamSizeInKB
        card = video_card()
        self.assertEqual(['ns0:VirtualMachineVideoCard',
                          'ns0:VirtualDeviceConfigSpec'], card[0])
        for model in fields.VideoModel.ALL:
            self.assertEqual(card, video_card(hw_video_model=model), model)
        self.assertIn('vmvga', fields.VideoModel.ALL)
        self.assertEqual(self.prefilter(hw_video_model='vmvga'),
                         table(VMWARE, family='graphics_model'))

    def test_vmware_update_provider_tree_adds_only_hw_arch_x86_64(self):
        """The VMware driver's own update_provider_tree, called as the
        resource tracker calls it: the one trait it adds is
        HW_ARCH_X86_64, which the table leaves to it."""
        driver = virt_drivers.vmware(self)
        self.assertEqual({'HW_ARCH_X86_64'},
                         virt_drivers.traits_after_update(driver))
        self.assertEqual({'CUSTOM_TROVE', 'HW_ARCH_X86_64'},
                         virt_drivers.traits_after_update(
                             driver, 'CUSTOM_TROVE'))
        self.assertNotIn('HW_ARCH_X86_64', metadata_traits.ALL_TRAITS)

    def test_only_armv7l_gets_a_name_os_traits_lacks(self):
        """Nova's libvirt driver computes HW_ARCH_<ARCH upper-cased>, and
        drops it unless os-traits has it: for every architecture Nova knows,
        only armv7l comes out invalid, and the table covers exactly it."""
        known = set(os_traits.get_traits(prefix='HW_ARCH_'))
        invalid = {a for a in fields.Architecture.ALL
                   if 'HW_ARCH_' + a.upper() not in known}
        self.assertEqual({nova_arch.ARMV7}, invalid)
        self.assertEqual(invalid,
                         set(metadata_traits.LIBVIRT_ROWS_BY_MACHINE))
        self.assertEqual({'HW_ARCH_ARMV7'}, table(LIBVIRT, nova_arch.ARMV7))
        # Nova's own prefilter gives up on armv7l (the name it computes is
        # invalid): the trait serves this project's prefilter.
        self.assertIsNone(self.prefilter(hw_architecture='armv7l'))

    def test_libvirt_arch_trait_on_armv7l_is_dropped_by_static_traits(self):
        from nova.virt.libvirt import driver as libvirt_driver
        drv = types.SimpleNamespace(_host=types.SimpleNamespace(
            get_capabilities=lambda: types.SimpleNamespace(
                host=types.SimpleNamespace(cpu=types.SimpleNamespace(
                    arch=nova_arch.ARMV7)))))
        traits = libvirt_driver.LibvirtDriver._get_cpu_arch_traits(drv)
        self.assertEqual({'HW_ARCH_ARMV7L': False}, traits)
        _, invalid = os_traits.check_traits(traits)
        self.assertEqual(['HW_ARCH_ARMV7L'], list(invalid))

    def test_none_is_a_trait_nova_compute_writes(self):
        capability = set(nova_driver.CAPABILITY_TRAITS_MAP.values())
        infrastructure = {os_traits.COMPUTE_NODE, os_traits.OWNER_NOVA,
                          os_traits.COMPUTE_STATUS_DISABLED}
        self.assertEqual(set(), metadata_traits.ALL_TRAITS
                         & (capability | infrastructure))
        self.assertLessEqual(metadata_traits.ALL_TRAITS,
                             set(os_traits.get_traits()))
