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

"""A fake virt driver that serves many compute nodes: the fleet's hosts.

Not imported by this project: ``python3 -m benchmarks.fleet run`` copies
this file into devstack's nova tree as ``nova/virt/itf_fleet.py``
(``[DEFAULT] compute_driver`` is loaded from the ``nova.virt`` package),
and each of the fleet's nova-computes runs it with ``compute_driver =
itf_fleet.FleetDriver`` and its own ``[fleet_driver]`` section.

Nova's own ``FakeDriver`` boots nothing and serves any list of nodes
(``_set_nodes``, the hook Nova's regression tests use); this driver gives
it ``node_count`` nodes named ``node_prefix`` and a 4-digit number, with node
UUIDs derived from the names (uuid5, as Nova's
``PredictableNodeUUIDDriver``), so a restarted nova-compute finds its
nodes again instead of failing on "Duplicate compute node record". It can
boot iso, qcow2, raw and vmdk; ``[compute] image_type_exclude_list``
narrows that per nova-compute, so nova-compute reports the image-type
traits itself, as in production. Its nodes offer their architecture to
Nova's ImagePropertiesFilter and carry ``architecture_trait``, if set, as
libvirt's nodes carry their CPU's ``HW_ARCH_*`` trait.
"""

import uuid

import nova.conf
from nova.objects import fields as obj_fields
from nova.virt import fake
from oslo_config import cfg

CONF = nova.conf.CONF

fleet_driver_opts = [
    cfg.IntOpt('node_count', default=1, min=1,
               help='How many compute nodes this nova-compute serves.'),
    cfg.StrOpt('node_prefix', default='fleet-',
               help='Node names: this prefix and a 4-digit number from 1.'),
    cfg.StrOpt('architecture', default=obj_fields.Architecture.X86_64,
               choices=(obj_fields.Architecture.X86_64,
                        obj_fields.Architecture.ARMV7),
               help='The CPU architecture every node has.'),
    cfg.StrOpt('architecture_trait',
               help='The HW_ARCH_* trait nova-compute reports on every '
                    'node (libvirt reports none on armv7l; VMware none).'),
]
CONF.register_opts(fleet_driver_opts, group='fleet_driver')


def node_uuid(nodename):
    """The node's UUID, the same in every process."""
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, nodename))


class FleetDriver(fake.FakeDriver):
    """``FakeDriver`` with many nodes, stable node UUIDs, four formats
    and an architecture."""

    capabilities = dict(fake.FakeDriver.capabilities,
                        supports_image_type_iso=True,
                        supports_image_type_qcow2=True,
                        supports_image_type_raw=True,
                        supports_image_type_vmdk=True)

    def __init__(self, virtapi, read_only=False):
        super().__init__(virtapi, read_only)
        self.host_status_base['supported_instances'] = [(
            CONF.fleet_driver.architecture, obj_fields.HVType.FAKE,
            obj_fields.VMMode.HVM)]

    def init_host(self, host):
        self._host = host
        conf = CONF.fleet_driver
        self._set_nodes(['%s%04d' % (conf.node_prefix, i)
                         for i in range(1, conf.node_count + 1)])

    def get_available_resource(self, nodename):
        resources = super().get_available_resource(nodename)
        if resources:
            resources['uuid'] = node_uuid(nodename)
        return resources

    def get_nodenames_by_uuid(self, refresh=False):
        return {node_uuid(n): n for n in self.get_available_nodes()}

    def update_provider_tree(self, provider_tree, nodename,
                             allocations=None):
        super().update_provider_tree(provider_tree, nodename, allocations)
        if CONF.fleet_driver.architecture_trait:
            provider_tree.add_traits(nodename,
                                     CONF.fleet_driver.architecture_trait)
