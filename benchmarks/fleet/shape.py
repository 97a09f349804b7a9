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

"""The fleet: which hosts boot what, and how many of each.

A real cloud's compute nodes differ: some boot raw only (Ceph-backed
libvirt), most qcow2 and raw (libvirt on local disk), a few are VMware
(vmdk, iso), a few are set aside for Trove (``CUSTOM_TROVE``, kept by the
reporter), and an armv7 group. Each group is one nova-compute serving its
share of the nodes with the scale driver (``scale_driver.py``): what a
group boots is the driver's capabilities narrowed by Nova's own
``[compute] image_type_exclude_list``, so nova-compute reports the
``COMPUTE_IMAGE_TYPE_*`` traits itself, as in production. Each group's
reporter is told which driver its hosts stand for (libvirt, or VMware for
the vmdk group) and keeps what it keeps on such hosts: the custom traits,
``HW_ARCH_ARMV7`` on armv7l libvirt, VMware's image-metadata traits.
nova-compute reports a node's ``HW_ARCH_*`` trait where libvirt does (not
on armv7l, whose name os-traits lacks; not on VMware).

The workload boots images in shares like a real cloud's catalog: every
format the fleet boots, a Trove image tagged ``trait:CUSTOM_TROVE=
required``, and armv7 images. Every image names its architecture
(``hw_architecture``), as images in a mixed-architecture cloud must.
"""

import collections
import dataclasses

#: The formats the scale driver can boot; each group excludes the rest.
DRIVER_FORMATS = ('iso', 'qcow2', 'raw', 'vmdk')
#: The trait Trove's hosts are reserved with ([image_isolation] rules).
RESERVED_TRAIT = 'CUSTOM_TROVE'
#: A trait only the reporters keep, on every node: what "traits lost"
#: counts.
REPORTED_TRAIT = 'CUSTOM_FLEET_REPORTED'


@dataclasses.dataclass(frozen=True)
class Group:
    """One kind of host, served by one nova-compute."""

    name: str
    share: float
    formats: tuple
    architecture: str = 'x86_64'
    custom_traits: tuple = ()
    reporter_driver: str = 'libvirt.LibvirtDriver'
    nova_reports_architecture: bool = True

    @property
    def excluded(self):
        """``[compute] image_type_exclude_list`` for this group."""
        return tuple(f for f in DRIVER_FORMATS if f not in self.formats)

    @property
    def reporter_traits(self):
        """What the group's reporter keeps ([virt_capabilities]
        custom_traits)."""
        return (REPORTED_TRAIT,) + self.custom_traits


GROUPS = (
    Group('raw', 0.40, ('raw',)),
    Group('qcow2', 0.44, ('qcow2', 'raw')),
    Group('vmdk', 0.04, ('iso', 'vmdk'),
          reporter_driver='vmwareapi.VMwareVCDriver',
          nova_reports_architecture=False),
    Group('trove', 0.04, ('qcow2', 'raw'), custom_traits=(RESERVED_TRAIT,)),
    Group('armv7', 0.08, ('qcow2', 'raw'), architecture='armv7l',
          nova_reports_architecture=False),
)


@dataclasses.dataclass(frozen=True)
class ImageKind:
    """One image of the workload's catalog."""

    name: str
    share: float
    disk_format: str
    architecture: str = 'x86_64'
    required_traits: tuple = ()

    @property
    def properties(self):
        """The Glance properties the image is uploaded with."""
        props = {'hw_architecture': self.architecture}
        props.update({'trait:%s' % t: 'required'
                      for t in self.required_traits})
        return props


IMAGES = (
    ImageKind('raw', 0.40, 'raw'),
    ImageKind('qcow2', 0.45, 'qcow2'),
    ImageKind('vmdk', 0.05, 'vmdk'),
    ImageKind('trove', 0.05, 'qcow2', required_traits=(RESERVED_TRAIT,)),
    ImageKind('armv7', 0.05, 'qcow2', architecture='armv7l'),
)


def apportion(total, shares, minimum=1):
    """``total`` split by ``shares`` (largest remainder), each at least
    ``minimum``: the counts, in order."""
    if total < minimum * len(shares):
        raise ValueError('%d is too few for %d groups of at least %d'
                         % (total, len(shares), minimum))
    whole = sum(shares)
    exact = [total * s / whole for s in shares]
    counts = [max(minimum, int(e)) for e in exact]
    order = sorted(range(len(shares)), key=lambda i: exact[i] - int(exact[i]),
                   reverse=True)
    i = 0
    while sum(counts) < total:
        counts[order[i % len(order)]] += 1
        i += 1
    while sum(counts) > total:
        largest = max(range(len(counts)), key=lambda k: counts[k])
        counts[largest] -= 1
    return counts


def node_counts(nodes):
    """{group name: nodes} for a fleet of ``nodes``."""
    return dict(zip((g.name for g in GROUPS),
                    apportion(nodes, [g.share for g in GROUPS]), strict=True))


def node_prefix(group):
    """The start of a group's node names (the scale driver numbers them
    from 1, 4 digits): unique in the fleet, and naming the group."""
    return 'fleet-%s-' % group


def node_names(group, count):
    return ['%s%04d' % (node_prefix(group), i) for i in range(1, count + 1)]


def group_of(node):
    """The group of a node, from its name."""
    for g in GROUPS:
        if node.startswith(node_prefix(g.name)):
            return g
    raise ValueError('%s is no node of the fleet' % node)


def boot_sequence(boots):
    """The images of ``boots`` boots in order, every kind spread through
    the run in its share (the same sequence for every mode)."""
    shares = [k.share for k in IMAGES]
    counts = dict(zip((k.name for k in IMAGES), apportion(boots, shares),
                      strict=True))
    # Smooth weighted round robin: each kind's boots evenly spaced.
    credit = collections.Counter()
    left = dict(counts)
    out = []
    for _ in range(boots):
        for name in left:
            if left[name]:
                credit[name] += counts[name]
        pick = max((n for n in left if left[n]), key=lambda n: credit[n])
        credit[pick] -= boots
        left[pick] -= 1
        out.append(pick)
    return out


def group(name):
    return {g.name: g for g in GROUPS}[name]


def image_kind(name):
    return {k.name: k for k in IMAGES}[name]


#: Each architecture's os-traits trait (the scale driver puts it on its
#: nodes; os-traits names armv7l's HW_ARCH_ARMV7).
ARCH_TRAITS = {'x86_64': 'HW_ARCH_X86_64', 'armv7l': 'HW_ARCH_ARMV7'}


def format_trait(disk_format):
    """The os-traits trait of an image format."""
    return 'COMPUTE_IMAGE_TYPE_' + disk_format.upper()
