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

"""Image-metadata traits a driver boots but nova-compute never writes.

The image-metadata prefilters turn ``hw_disk_bus``, ``hw_architecture``
... into required traits; where a Nova 34 driver boots a value but never
reports its trait, none of its hosts is offered for such an image. These
rows list exactly those traits, each naming the Nova 34.0.0 source that
boots the value (``drivers.DRIVERS`` says whose rows are whose).

Every trait here is one nova-compute never writes for that driver: neither
its ``update_provider_tree`` (VMware adds only ``HW_ARCH_X86_64``:
nova/virt/vmwareapi/driver.py:536-539; libvirt's ``static_traits`` drops
the name it computes on armv7l) nor the resource tracker (it sets and unsets
only ``capabilities_as_traits``, nova/virt/driver.py:219-259, and
``COMPUTE_NODE``, ``OWNER_NOVA``, ``COMPUTE_STATUS_DISABLED``:
nova/compute/resource_tracker.py:1247-1287). So the reporter may own them
whoever owns the image-type traits, and never fights nova-compute over one.
"""

import dataclasses

from image_type_common import image_metadata

#: The prefilter's families (the shared catalogue's names); only those a
#: row below serves.
STORAGE_BUS = image_metadata.FAMILIES['storage_bus'].name
VIF_MODEL = image_metadata.FAMILIES['vif_model'].name
GRAPHICS_MODEL = image_metadata.FAMILIES['graphics_model'].name
ARCHITECTURE = image_metadata.FAMILIES['architecture'].name


@dataclasses.dataclass(frozen=True)
class Row:
    trait: str
    family: str
    #: Where Nova 34.0.0 boots the value (paths under nova/).
    source: str


#: VMware: the values its spawn path honours. nova/virt/vmwareapi/driver.py
#: update_provider_tree (432-539) reports none of them.
VMWARE_ROWS = (
    # hw_disk_bus=ide -> the IDE adapter; CD-ROMs (ISO images, config
    # drives) always go on IDE. Nova turns the legacy vmware_adaptertype
    # property into hw_disk_bus=ide/scsi (objects/image_meta.py:697-702).
    Row('COMPUTE_STORAGE_BUS_IDE', STORAGE_BUS,
        'virt/vmwareapi/images.py:164-165, virt/vmwareapi/vmops.py:895-899'),
    # hw_disk_bus=scsi -> a SCSI adapter of hw_scsi_model's kind.
    Row('COMPUTE_STORAGE_BUS_SCSI', STORAGE_BUS,
        'virt/vmwareapi/images.py:154-163, 166-168'),
    # hw_vif_model (images.py:170-178 -> vmops.py:275-278, and
    # vmops.py:1907-1909 on attach) through convert_vif_model
    # (vm_util.py:419): these six, anything else is refused. Nova
    # canonicalises VMware's legacy names (VirtualVmxnet3 -> vmxnet3,
    # objects/fields.py:631-651).
    *(Row('COMPUTE_NET_VIF_MODEL_' + model, VIF_MODEL,
          'virt/vmwareapi/vm_util.py:%d-%d' % (line, line + 1))
      for model, line in (('E1000', 393), ('E1000E', 395), ('PCNET', 397),
                          ('SRIOV', 399), ('VMXNET', 401),
                          ('VMXNET3', 403))),
    # The driver never reads hw_video_model: every VM gets vSphere's
    # VirtualMachineVideoCard (only its video RAM is set, from
    # hw_video_ram), the VMware SVGA adapter, which Nova's VideoModel calls
    # vmvga (objects/fields.py:619). An image asking for vmvga gets exactly
    # that; any other model would be ignored, so none is reported.
    Row('COMPUTE_GRAPHICS_MODEL_VMVGA', GRAPHICS_MODEL,
        'virt/vmwareapi/vm_util.py:246-249, 292-300'),
)

#: libvirt, by the host CPU's architecture (``uname -m``, what libvirt's
#: capabilities report). On armv7l ``_get_cpu_arch_traits`` computes
#: HW_ARCH_ARMV7L (virt/libvirt/driver.py:13937-13943), which os-traits
#: lacks (its name is HW_ARCH_ARMV7), so ``static_traits`` drops it
#: (driver.py:10184-10187): nova-compute neither adds nor removes any
#: HW_ARCH_* trait there. Every other architecture Nova knows gets its
#: trait from nova-compute, so it is none of ours.
LIBVIRT_ROWS_BY_MACHINE = {
    'armv7l': (Row('HW_ARCH_ARMV7', ARCHITECTURE,
                   'virt/libvirt/driver.py:13937-13943, 10184-10187'),),
}

#: Every trait of the table: no other standard trait is ever owned.
ALL_TRAITS = frozenset(r.trait for rows in (
    VMWARE_ROWS, *LIBVIRT_ROWS_BY_MACHINE.values()) for r in rows)
