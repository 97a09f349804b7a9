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

"""The image-metadata catalogue: image property values -> os-traits traits.

Each family: the image properties it reads, the values Nova accepts
(nova/objects/fields.py in 34.0.0, copied literally) and the os-traits
prefix. A value's trait is the prefix and the upper-cased value (``-`` ->
``_``) when os-traits has that name (Nova's own misspellings fixed by
hand), else None: no constraint, never a guess. The request filter asks
for these traits; the reporter names those a driver boots unreported.
"""

import dataclasses
import functools
import types

import os_traits


@dataclasses.dataclass(frozen=True, eq=False)
class Family:
    """One family of image properties and the traits that serve them."""

    name: str
    #: Image properties read, in order; a legacy name last.
    properties: tuple
    #: The values Nova accepts for these properties.
    values: tuple
    #: os-traits prefix of the family's traits.
    prefix: str
    #: Value -> trait where the plain rule gives no os-traits name.
    spelling: dict = dataclasses.field(default_factory=dict)
    #: Value -> further traits whose hosts boot it too (a 64-bit host CPU
    #: runs its 32-bit guests).
    also_booted_by: dict = dataclasses.field(default_factory=dict)
    #: True: a host that reports none of the family's traits may boot any
    #: value, so a request forbids the family's other traits instead of
    #: requiring one (the same rule for every value of the family).
    absent_means_unknown: bool = False
    #: Value -> the value Nova's ImageMeta rewrites it to (``canonical``).
    aliases: dict = dataclasses.field(default_factory=dict)

    @functools.cached_property
    def traits(self):
        """Every trait of the family that os-traits knows, sorted."""
        return tuple(sorted(os_traits.get_traits(prefix=self.prefix)))

    def trait_for(self, value):
        """The os-traits trait for a canonical value, or None: only the
        values Nova accepts, so no other string can reach a trait name."""
        if value not in self.values:
            return None
        name = self.spelling.get(
            value, self.prefix + value.upper().replace('-', '_'))
        return name if name in _ALL_TRAITS else None

    def serving_traits(self, value):
        """Every trait whose hosts boot ``value`` (its own first), or ()."""
        trait = self.trait_for(value)
        if trait is None:
            return ()
        more = [t for t in self.also_booted_by.get(value, ())
                if t in _ALL_TRAITS]
        return (trait, *more)


_ALL_TRAITS = frozenset(os_traits.get_traits())

# nova/objects/fields.py (nova 34.0.0), the ``ALL`` tuples.
DISK_BUSES = ('fdc', 'ide', 'sata', 'scsi', 'usb', 'virtio', 'xen', 'lxc',
              'uml')  # DiskBus.ALL, 362
VIF_MODELS = ('virtio', 'ne2k_pci', 'pcnet', 'rtl8139', 'e1000', 'e1000e',
              'netfront', 'spapr-vlan', 'lan9118', 'sriov', 'vmxnet',
              'vmxnet3', 'igb')  # VIFModel.ALL: network/model.py 163-177
VIDEO_MODELS = ('cirrus', 'qxl', 'vga', 'vmvga', 'xen', 'virtio', 'gop',
                'none', 'bochs')  # VideoModel.ALL, 626
ARCHITECTURES = (
    'alpha', 'armv6', 'armv7l', 'armv7b', 'aarch64', 'cris', 'i686', 'ia64',
    'lm32', 'm68k', 'microblaze', 'microblazeel', 'mips', 'mipsel', 'mips64',
    'mips64el', 'openrisc', 'parisc', 'parisc64', 'ppc', 'ppcle', 'ppc64',
    'ppc64le', 'ppcemb', 's390', 's390x', 'sh4', 'sh4eb', 'sparc',
    'sparc64', 'unicore32', 'x86_64', 'xtensa', 'xtensaeb')
# Architecture.ALL (fields.py 170) is nova/virt/arch.py ALL, 57-66
VIOMMU_MODELS = ('intel', 'smmuv3', 'virtio', 'auto')  # VIOMMUModel.ALL, 662

#: Architecture.canonicalize (fields.py 193-219): aliases Nova rewrites.
ARCH_ALIASES = types.MappingProxyType({
    'i386': 'i686', 'i486': 'i686', 'i586': 'i686', 'x86_32': 'i686',
    'x86_32p': 'i686', 'amd64': 'x86_64'})
#: VIFModel.LEGACY_VALUES (fields.py 631-643): VMware's old spellings.
VIF_LEGACY = types.MappingProxyType({
    'virtuale1000': 'e1000', 'virtuale1000e': 'e1000e',
    'virtualpcnet32': 'pcnet', 'virtualsriovethernetcard': 'sriov',
    'virtualvmxnet': 'vmxnet', 'virtualvmxnet3': 'vmxnet3'})

FAMILIES = types.MappingProxyType({f.name: f for f in (
    Family('storage_bus', ('hw_disk_bus', 'hw_cdrom_bus'), DISK_BUSES,
           'COMPUTE_STORAGE_BUS_'),
    Family('vif_model', ('hw_vif_model',), VIF_MODELS,
           'COMPUTE_NET_VIF_MODEL_', aliases=VIF_LEGACY),
    Family('graphics_model', ('hw_video_model',), VIDEO_MODELS,
           'COMPUTE_GRAPHICS_MODEL_'),
    # HW_ARCH_* is the host CPU (libvirt's _get_cpu_arch_traits). Nova
    # computes HW_ARCH_ARMV7L, which os-traits spells HW_ARCH_ARMV7; and
    # an x86_64 host boots i686 guests (ImagePropertiesFilter passes it).
    # The ironic and z/VM drivers report no HW_ARCH_* at all, and Nova's
    # ImagePropertiesFilter checks their architecture itself (from their
    # supported_instances): every architecture, i686 or aarch64, forbids
    # the other HW_ARCH_* traits and leaves such hosts to it (the
    # prefilter refuses, naming the trait, only when no host can run it).
    Family('architecture', ('hw_architecture', 'architecture'),
           ARCHITECTURES, 'HW_ARCH_', aliases=ARCH_ALIASES,
           spelling={'armv7l': 'HW_ARCH_ARMV7'},
           also_booted_by={'i686': ('HW_ARCH_X86_64',)},
           absent_means_unknown=True),
    # COMPUTE_ARCH_* exists for only a few emulated architectures.
    Family('emulation_architecture', ('hw_emulation_architecture',),
           ARCHITECTURES, 'COMPUTE_ARCH_', aliases=ARCH_ALIASES),
    # Nova computes COMPUTE_VIOMMU_X; os-traits and the libvirt driver say
    # COMPUTE_VIOMMU_MODEL_X.
    Family('viommu_model', ('hw_viommu_model',), VIOMMU_MODELS,
           'COMPUTE_VIOMMU_MODEL_'),
)})

NAMES = tuple(FAMILIES)

FAMILY_BY_PROPERTY = types.MappingProxyType(
    {p: f for f in FAMILIES.values() for p in f.properties})

#: The legacy image properties Nova reads as another, legacy -> current
#: (ImageMetaProps._legacy_property_map, nova/objects/image_meta.py; the
#: same in every supported Nova). Nova reads a legacy name only when the
#: current one is unset. The project's one table of them: tests/nova
#: compares it with Nova's.
LEGACY_PROPERTIES = types.MappingProxyType({
    'architecture': 'hw_architecture',
    'owner_id': 'img_owner_id',
    'vmware_disktype': 'hw_disk_type',
    'vmware_image_version': 'img_version',
    'vmware_ostype': 'os_distro',
    'auto_disk_config': 'hw_auto_disk_config',
    'ipxe_boot': 'hw_ipxe_boot',
    'xenapi_device_id': 'hw_device_id',
    'xenapi_image_compression_level': 'img_compression_level',
    'vmware_linked_clone': 'img_linked_clone',
    'xenapi_use_agent': 'img_use_agent',
    'xenapi_skip_agent_inject_ssh': 'os_skip_agent_inject_ssh',
    'xenapi_skip_agent_inject_files_at_boot':
        'os_skip_agent_inject_files_at_boot',
    'cache_in_nova': 'img_cache_in_nova',
    'vm_mode': 'hw_vm_mode',
    'bittorrent': 'img_bittorrent',
    'mappings': 'img_mappings',
    'block_device_mapping': 'img_block_device_mapping',
    'bdm_v2': 'img_bdm_v2',
    'root_device_name': 'img_root_device_name',
    'hypervisor_version_requires': 'img_hv_requested_version',
    'hypervisor_type': 'img_hv_type',
})
#: One more legacy name, read outside that map
#: (``_set_attr_from_legacy_names``): ``ide`` sets ``hw_disk_bus=ide``,
#: any other value ``hw_disk_bus=scsi`` and ``hw_scsi_model``.
VMWARE_ADAPTERTYPE = 'vmware_adaptertype'


def canonical(prop, value):
    """The value as Nova's ImageMeta stores it (lower case, aliases
    rewritten), or None for anything that is not a string."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    value = value.strip().lower()
    family = FAMILY_BY_PROPERTY.get(prop)
    return family.aliases.get(value, value) if family else value


def family_of_trait(trait):
    """The family a trait belongs to, or None."""
    for family in FAMILIES.values():
        if isinstance(trait, str) and trait.startswith(family.prefix):
            return family
    return None
