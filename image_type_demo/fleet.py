"""Build compute hosts in a Placement: a provider with inventory, then traits.

Each host is described by its own nova.conf fragment and reported through
the real reporter (``virt_capabilities.service.ReportJob``), exactly as a
compute node would. Used by the demo, functional tests and benchmarks.
"""

import dataclasses
import os
import tempfile
import textwrap

import os_traits

from virt_capabilities import service

NOVA_COMPUTE_NODE = os_traits.COMPUTE_NODE
DEFAULT_INVENTORY = {
    'VCPU': {'total': 16, 'allocation_ratio': 4.0},
    'MEMORY_MB': {'total': 32768},
    'DISK_GB': {'total': 500},
}


@dataclasses.dataclass
class Host:
    name: str
    nova_conf: str
    inventory: dict = dataclasses.field(
        default_factory=lambda: dict(DEFAULT_INVENTORY))
    uuid: str = None
    compute_driver: str = None
    formats: list = None


#: The demo's mixed fleet: each kind of node as its nova.conf says it.
DEMO_FLEET = [
    Host('libvirt-qcow2-1', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        images_type = qcow2
        '''),
    Host('libvirt-qcow2-2', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        images_type = qcow2
        '''),
    Host('libvirt-ceph-1', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        images_type = rbd
        [compute]
        image_type_exclude_list = qcow2
        '''),
    Host('libvirt-ceph-2', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        images_type = rbd
        [compute]
        image_type_exclude_list = qcow2
        '''),
    Host('libvirt-lvm-1', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        force_raw_images = False
        [libvirt]
        images_type = lvm
        '''),
    Host('parallels-1', '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        virt_type = parallels
        images_type = ploop
        '''),
    Host('vmware-1', '''
        [DEFAULT]
        compute_driver = vmwareapi.VMwareVCDriver
        '''),
    Host('vmware-2', '''
        [DEFAULT]
        compute_driver = nova.virt.vmwareapi.VMwareVCDriver
        '''),
    Host('ironic-1', '''
        [DEFAULT]
        compute_driver = ironic.IronicDriver
        '''),
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
        '''),
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
    rp = client.create_resource_provider(name)
    generation = rp['generation']
    if inventory:
        generation = client.put_inventories(
            rp['uuid'], generation, inventory)['resource_provider_generation']
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
        generation = client.put_inventories(
            uuid, generation, inventory)['resource_provider_generation']
    current, generation = client.get_provider_traits(uuid)
    if not set(traits) <= current:
        client.put_provider_traits(uuid, current | set(traits), generation)
    return uuid


def build(placement, hosts, progress=None, reuse=False):
    """Create every host's provider and report its traits for real.

    ``reuse``: a provider that already has a host's name is that host (a
    second demo run on a kept database), its traits reported again.
    """
    client = placement.client()
    with tempfile.TemporaryDirectory(prefix='fleet-') as workdir:
        for host in hosts:
            host.uuid = (reuse and reuse_provider(client, host.name,
                                                  host.inventory)
                         or create_provider(client, host.name,
                                            host.inventory))
            own = os.path.join(workdir, host.name + '.conf')
            with open(own, 'w') as f:
                f.write(textwrap.dedent(host.nova_conf))
            node = os.path.join(workdir, host.name + '-node.conf')
            with open(node, 'w') as f:
                f.write('[DEFAULT]\nstate_path = %s\n%s'
                        % (workdir, placement.nova_conf_section()))
            job = service.ReportJob([own, node], [host.uuid])
            report = job.sync()
            if not report.ok:
                raise RuntimeError('reporting %s failed' % host.name)
            host.compute_driver = job.plan.capabilities.compute_driver
            host.formats = sorted(job.plan.capabilities.formats)
            if progress:
                progress.advance()
    return hosts
