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

"""The benchmark fleet: which kind of node each host is, and its traits.

79.5% libvirt-like, 20% VMware-like, and 0.5% Parallels (ploop), the rare
format. The Parallels hosts are the last ones built, as hosts added to an
existing cloud are: with Placement's default candidate order they come
after the first ``max_placement_results``.

Two fleet shapes: "flat" hosts are one provider with VCPU, MEMORY_MB and
DISK_GB; "nested" hosts keep DISK_GB and every trait on the root and put
VCPU and MEMORY_MB on a child (``<name>-numa0``), the shape
benchmarks/root_required_patch.py measures too.
"""

import os_traits

from image_type_common import image_types

T = image_types.TRAIT_BY_FORMAT
KIND_TRAITS = {
    'libvirt': frozenset(T[f] for f in ('aki', 'ami', 'ari', 'iso', 'qcow2',
                                        'raw')),
    'vmware': frozenset(T[f] for f in ('iso', 'vmdk')),
    'parallels': frozenset(T[f] for f in ('ploop',)),
}
#: nova-compute's own trait and one that belongs to nobody we know: both
#: must still be there after every reporter has written.
OTHERS_TRAITS = frozenset({os_traits.COMPUTE_NODE, 'HW_CPU_X86_AVX2'})
INVENTORY = {'VCPU': {'total': 32, 'allocation_ratio': 4.0},
             'MEMORY_MB': {'total': 131072}, 'DISK_GB': {'total': 2000}}
RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 5}
SHAPES = ('flat', 'nested')
#: The child's share of INVENTORY in a nested host; the root keeps the rest.
CHILD_RESOURCES = frozenset({'VCPU', 'MEMORY_MB'})


def inventories(shape):
    """(root inventory, child inventory or None) of one host."""
    if shape == 'flat':
        return INVENTORY, None
    return ({rc: inv for rc, inv in INVENTORY.items()
             if rc not in CHILD_RESOURCES},
            {rc: inv for rc, inv in INVENTORY.items()
             if rc in CHILD_RESOURCES})
VMWARE_SHARE = 0.2
RARE_SHARE = 0.005


def kinds(size):
    """The kind of each of ``size`` hosts, in build order."""
    rare = max(1, round(size * RARE_SHARE))
    common = size - rare
    step = round(1 / VMWARE_SHARE)
    return (['vmware' if i % step == 0 else 'libvirt' for i in range(common)]
            + ['parallels'] * rare)


def expected_holders(nodes):
    """{image trait: set of uuids} the fleet should end with."""
    holders = {}
    for uuid, kind in nodes:
        for trait in KIND_TRAITS[kind]:
            holders.setdefault(trait, set()).add(uuid)
    return holders
