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

"""What the cloud must do, worked out from Placement and os-traits alone.

Nothing here imports image-type-filter: the tests compare the cloud's
behaviour with os-traits' names and Nova's own spelling, so a filter that
does nothing (or the wrong thing) makes them fail.
"""

import os_traits

#: Nova's disk_format -> trait rule (nova.scheduler.request_filter.
#: require_image_type_support): the format upper-cased after this prefix,
#: when os-traits has the name.
IMAGE_TYPE_PREFIX = 'COMPUTE_IMAGE_TYPE_'
IMAGE_TYPE_TRAITS = frozenset(os_traits.get_traits(prefix=IMAGE_TYPE_PREFIX))

#: Per image-metadata family: the image property it reads, the os-traits
#: prefix of the trait a host needs (the names the virt drivers report),
#: and values Nova's ImageMetaProps accepts, tried in this order for one
#: no host satisfies. The trait is prefix + value upper-cased ('-' -> '_').
FAMILIES = {
    'storage_bus': ('hw_disk_bus', 'COMPUTE_STORAGE_BUS_',
                    ('xen', 'uml', 'lxc', 'fdc', 'usb', 'sata', 'scsi',
                     'ide', 'virtio')),
    'vif_model': ('hw_vif_model', 'COMPUTE_NET_VIF_MODEL_',
                  ('lan9118', 'pcnet', 'ne2k_pci', 'rtl8139', 'e1000e',
                   'e1000', 'virtio')),
    'graphics_model': ('hw_video_model', 'COMPUTE_GRAPHICS_MODEL_',
                       ('gop', 'xen', 'vmvga', 'bochs', 'qxl', 'cirrus',
                        'vga', 'virtio')),
    'architecture': ('hw_architecture', 'HW_ARCH_',
                     ('s390x', 'ppc64le', 'aarch64', 'x86_64')),
    'emulation_architecture': ('hw_emulation_architecture',
                               'COMPUTE_ARCH_',
                               ('s390x', 'ppc64le', 'aarch64', 'x86_64')),
    'viommu_model': ('hw_viommu_model', 'COMPUTE_VIOMMU_MODEL_',
                     ('smmuv3', 'intel', 'virtio')),
}


def trait_for_format(disk_format):
    """The trait Nova asks for an image of ``disk_format``, or None."""
    trait = IMAGE_TYPE_PREFIX + disk_format.upper()
    return trait if trait in IMAGE_TYPE_TRAITS else None


def format_of(trait):
    return trait[len(IMAGE_TYPE_PREFIX):].lower()


def container_format(disk_format):
    """Glance wants the matching container for the Amazon formats."""
    return disk_format if disk_format in ('ami', 'aki', 'ari') else 'bare'


class Fleet:
    """The compute nodes' resource providers and their traits."""

    def __init__(self, traits_by_host):
        self.traits_by_host = {h: frozenset(t)
                               for h, t in traits_by_host.items()}

    @classmethod
    def from_placement(cls, providers_client, hypervisor_names):
        """Read every compute node's provider (named as Nova names it:
        the hypervisor hostname) and its traits."""
        providers = providers_client.list_resource_providers()[
            'resource_providers']
        by_name = {p['name']: p['uuid'] for p in providers}
        missing = sorted(set(hypervisor_names) - set(by_name))
        if missing:
            raise AssertionError('Placement has no resource provider for '
                                 'hypervisor(s) %s' % ', '.join(missing))
        return cls({name: providers_client.list_resource_provider_traits(
            by_name[name])['traits'] for name in hypervisor_names})

    def hosts(self, required=(), forbidden=()):
        """Hosts carrying every ``required`` trait and no ``forbidden``."""
        required, forbidden = set(required), set(forbidden)
        return {h for h, traits in self.traits_by_host.items()
                if required <= traits and not forbidden & traits}

    def carried(self):
        return frozenset().union(*self.traits_by_host.values())

    def bootable_formats(self):
        """Lower-case formats at least one host reports, sorted."""
        return sorted(format_of(t) for t in self.carried()
                      if t in IMAGE_TYPE_TRAITS)

    def unsatisfied_property(self, family):
        """(property, value, trait) of ``family`` that no host satisfies,
        with an os-traits trait, or None."""
        prop, prefix, values = FAMILIES[family]
        known = set(os_traits.get_traits(prefix=prefix))
        carried = self.carried()
        for value in values:
            trait = prefix + value.upper().replace('-', '_')
            if trait in known and trait not in carried:
                return prop, value, trait
        return None
