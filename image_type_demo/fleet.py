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

"""Build compute hosts in a Placement: a provider with inventory, then traits.

Each host is described by its own nova.conf fragment and reported through
the real reporter (``virt_capabilities.service.ReportJob``), exactly as a
compute node would; the traits nova-compute would keep are put first, as
it would. An ironic host's reporter writes its Ironic node, not the
provider, and no Ironic runs here: its provider carries nova-compute's
traits only. Used by the demo, functional tests and benchmarks.
"""

import dataclasses
import os
import tempfile
import textwrap

import os_traits

from placement_runner import writes

NOVA_COMPUTE_NODE = os_traits.COMPUTE_NODE
DEFAULT_INVENTORY = {
    'VCPU': {'total': 16, 'allocation_ratio': 4.0},
    'MEMORY_MB': {'total': 32768},
    'DISK_GB': {'total': 500},
}


def _traits(prefix, *values):
    return tuple(prefix + v for v in values)


#: What nova-compute itself reports besides COMPUTE_NODE, per kind of host
#: (nova 34.0.0): libvirt's static_traits for KVM and Parallels
#: (virt/libvirt/driver.py 10170-10191; buses from blockinfo.py 96-105 and
#: the domain capabilities, VIF models from vif.py 52-82, video and vIOMMU
#: models from the domain capabilities, HW_ARCH_* from the host CPU and
#: COMPUTE_ARCH_* from the emulators installed), and VMware's one
#: HW_ARCH_X86_64 (virt/vmwareapi/driver.py 532-539; the reporter adds the
#: buses and models VMware boots). Ironic and z/VM report none of these.
KVM_VIF = _traits('COMPUTE_NET_VIF_MODEL_', 'VIRTIO', 'NE2K_PCI', 'PCNET',
                  'RTL8139', 'E1000', 'E1000E', 'SPAPR_VLAN', 'VMXNET3',
                  'IGB')
KVM_X86_64 = (
    *_traits('COMPUTE_STORAGE_BUS_', 'VIRTIO', 'SCSI', 'IDE', 'USB', 'FDC',
             'SATA'),
    *KVM_VIF,
    *_traits('COMPUTE_GRAPHICS_MODEL_', 'VGA', 'CIRRUS', 'VMVGA', 'QXL',
             'VIRTIO', 'NONE', 'BOCHS'),
    *_traits('COMPUTE_VIOMMU_MODEL_', 'AUTO', 'INTEL', 'VIRTIO'),
    'HW_ARCH_X86_64', 'COMPUTE_ARCH_X86_64')
KVM_AARCH64 = (
    *_traits('COMPUTE_STORAGE_BUS_', 'VIRTIO', 'SCSI', 'USB', 'SATA'),
    *KVM_VIF,
    *_traits('COMPUTE_GRAPHICS_MODEL_', 'VIRTIO', 'NONE'),
    *_traits('COMPUTE_VIOMMU_MODEL_', 'AUTO', 'SMMUV3', 'VIRTIO'),
    'HW_ARCH_AARCH64', 'COMPUTE_ARCH_AARCH64')
PARALLELS = (
    *_traits('COMPUTE_STORAGE_BUS_', 'IDE', 'SCSI'),
    *_traits('COMPUTE_NET_VIF_MODEL_', 'VIRTIO', 'RTL8139', 'E1000'),
    'HW_ARCH_X86_64')
VMWARE = ('HW_ARCH_X86_64',)
#: An ironic node's image-type traits, which nova-compute's resource
#: tracker keeps itself from the ironic driver's capabilities
#: (virt/ironic/driver.py 173-183): the reporter refuses to own them there,
#: so the demo puts them as nova-compute would.
IRONIC = _traits('COMPUTE_IMAGE_TYPE_', 'AMI', 'QCOW2', 'RAW')

#: Where the reporter keeps a host's traits (``Host.reporter_writes``).
ON_PROVIDER = 'provider'
ON_IRONIC_NODE = 'Ironic node'


@dataclasses.dataclass
class Host:
    name: str
    nova_conf: str
    inventory: dict = dataclasses.field(
        default_factory=lambda: dict(DEFAULT_INVENTORY))
    #: What nova-compute reports of its own, besides COMPUTE_NODE.
    nova_compute_traits: tuple = ()
    uuid: str = None
    compute_driver: str = None
    formats: list = None
    #: Where its reporter keeps its traits: ON_PROVIDER, or, for an ironic
    #: node, ON_IRONIC_NODE (nova-compute copies them to the provider).
    reporter_writes: str = None

    @property
    def own_traits(self):
        return (NOVA_COMPUTE_NODE, *self.nova_compute_traits)


#: The demo's mixed fleet: each kind of node as its nova.conf says it.
DEMO_FLEET = [
    Host('libvirt-qcow2-1', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        images_type = qcow2
        ''', nova_compute_traits=KVM_X86_64),
    Host('libvirt-qcow2-2', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        images_type = qcow2
        ''', nova_compute_traits=KVM_X86_64 + ('COMPUTE_ARCH_AARCH64',)),
    Host('libvirt-ceph-1', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        images_type = rbd
        [compute]
        image_type_exclude_list = qcow2
        ''', nova_compute_traits=KVM_X86_64),
    Host('libvirt-ceph-2', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        images_type = rbd
        [compute]
        image_type_exclude_list = qcow2
        ''', nova_compute_traits=KVM_X86_64),
    Host('libvirt-lvm-1', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        force_raw_images = False
        [libvirt]
        images_type = lvm
        ''', nova_compute_traits=KVM_X86_64),
    Host('parallels-1', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        virt_type = parallels
        images_type = ploop
        ''', nova_compute_traits=PARALLELS),
    # An Arm server: a KVM host whose CPU is aarch64.
    Host('libvirt-arm-1', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        images_type = qcow2
        ''', nova_compute_traits=KVM_AARCH64),
    Host('vmware-1', '''
        [DEFAULT]
        compute_driver = vmwareapi.VMwareVCDriver
        ''', nova_compute_traits=VMWARE),
    Host('vmware-2', '''
        [DEFAULT]
        compute_driver = nova.virt.vmwareapi.VMwareVCDriver
        ''', nova_compute_traits=VMWARE),
    # Its reporter keeps custom traits on the Ironic node, never on the
    # provider; the demo runs no Ironic, and gives this one none.
    Host('ironic-1', '''
        [DEFAULT]
        compute_driver = ironic.IronicDriver
        ''', nova_compute_traits=IRONIC),
    Host('zvm-1', '''
        [DEFAULT]
        compute_driver = zvm.ZVMDriver
        '''),
    # Set aside for Trove: only Trove images, and nothing else, land here.
    Host('trove-1', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [virt_capabilities]
        custom_traits = CUSTOM_TROVE
        ''', nova_compute_traits=KVM_X86_64),
]

#: The demo's isolation rule: the Trove host takes only requests whose image
#: (or flavor) says trait:CUSTOM_TROVE=required, Nova's own spelling.
TROVE_RULE = 'CUSTOM_TROVE'
TROVE_TAG = {'trait:CUSTOM_TROVE': 'required'}


def demo_fleet(suffix=''):
    """Fresh copies of the demo fleet, names optionally suffixed."""
    return [dataclasses.replace(h, name=h.name + suffix,
                                inventory=dict(h.inventory))
            for h in DEMO_FLEET]


def create_provider(client, name, inventory, traits=(NOVA_COMPUTE_NODE,)):
    """A compute node as nova-compute creates it: the provider, its
    inventory and nova-compute's own traits (``COMPUTE_NODE``)."""
    rp = writes.create_resource_provider(client, name)
    generation = rp['generation']
    if inventory:
        generation = writes.put_inventories(
            client, rp['uuid'], generation,
            inventory)['resource_provider_generation']
    if traits:
        client.put_provider_traits(rp['uuid'], set(traits), generation)
    return rp['uuid']


def reuse_provider(client, name, inventory, traits=(NOVA_COMPUTE_NODE,)):
    """The provider named ``name`` if Placement has one, with this
    inventory and nova-compute's own traits added; else None."""
    found = client.list_resource_providers(name=name)
    if not found:
        return None
    uuid = found[0]['uuid']
    generation = found[0]['generation']
    if inventory:
        generation = writes.put_inventories(
            client, uuid, generation,
            inventory)['resource_provider_generation']
    current, generation = client.get_provider_traits(uuid)
    if not set(traits) <= current:
        client.put_provider_traits(uuid, current | set(traits), generation)
    return uuid


def build(placement, hosts, progress=None, reuse=False):
    """Create every host's provider and report its traits for real.

    ``reuse``: a provider that already has a host's name is that host (a
    second demo run on a kept database), its traits reported again.
    """
    # Here, not at the top: cliff loads every command's module to start
    # any of them, and the reporter's service (oslo.log with it) is the
    # demo's alone; `candidates` and `status` start without it.
    from virt_capabilities import plan as plan_mod
    from virt_capabilities import service

    client = placement.client()
    with tempfile.TemporaryDirectory(prefix='fleet-') as workdir:
        for host in hosts:
            host.uuid = (reuse and reuse_provider(client, host.name,
                                                  host.inventory,
                                                  host.own_traits)
                         or create_provider(client, host.name,
                                            host.inventory, host.own_traits))
            own = os.path.join(workdir, host.name + '.conf')
            with open(own, 'w') as f:
                f.write(textwrap.dedent(host.nova_conf))
            node = os.path.join(workdir, host.name + '-node.conf')
            with open(node, 'w') as f:
                # Its own host: each node's reporter is one of its own.
                f.write('[DEFAULT]\nhost = %s\nstate_path = %s\n%s'
                        % (host.name, workdir, placement.nova_conf_section()))
            plan = plan_mod.NodePlan.from_files([own, node], [host.uuid])
            host.compute_driver = plan.capabilities.compute_driver
            host.formats = sorted(plan.capabilities.formats)
            if plan.on_ironic_node:
                # Its reporter writes the Ironic node, which the demo does
                # not run; nova-compute's traits are on the provider.
                host.reporter_writes = ON_IRONIC_NODE
                if progress:
                    progress.advance()
                continue
            host.reporter_writes = ON_PROVIDER
            owner = os.path.join(workdir, host.name + '-owner.conf')
            with open(owner, 'w') as f:
                # No nova-compute runs here: the reporter keeps the
                # image-type traits it would.
                f.write('[virt_capabilities]\n'
                        'image_type_traits_owner = reporter\n')
            job = service.ReportJob([own, node, owner], [host.uuid])
            report = job.sync()
            if not report.ok:
                raise RuntimeError('reporting %s failed: %s' % (
                    host.name, '; '.join(str(r.error)
                                         for r in report.errors)
                    or report.state_error))
            if progress:
                progress.advance()
    return hosts
