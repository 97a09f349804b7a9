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

"""Nova's own virt drivers, ready to call without their hypervisors.

Each driver object is Nova's class, its hypervisor stubbed the way Nova's
own unit tests stub it (a fake cluster for VMware, a fake z/VM hypervisor,
a cached Ironic node from Nova's own test helpers), so a test calls the
driver's real ``update_provider_tree`` as the resource tracker does.
"""

import collections

from nova import test
from nova.compute import provider_tree as provider_tree_mod
from nova.tests.unit.virt.ironic import utils as ironic_utils
from nova.virt import fake as fake_driver
from nova.virt.ironic import driver as ironic_driver
from nova.virt.vmwareapi import driver as vmware_driver
from nova.virt.zvm import driver as zvm_driver

NODE = 'node-1'
NODE_UUID = 'f0e1d2c3-b4a5-4697-8899-aabbccddeeff'


def provider_tree(*traits):
    """A provider tree of one node carrying ``traits``."""
    tree = provider_tree_mod.ProviderTree()
    tree.new_root(NODE, NODE_UUID)
    tree.update_traits(NODE, list(traits))
    return tree


def traits_after_update(driver, *traits):
    """The node's traits once the driver's update_provider_tree ran."""
    tree = provider_tree(*traits)
    driver.update_provider_tree(tree, NODE)
    return set(tree.data(NODE).traits)


def fake():
    return fake_driver.FakeDriver(None)


def fake_single_node():
    return fake_driver.FakeDriverWithoutFakeNodes(None)


def zvm():
    driver = object.__new__(zvm_driver.ZVMDriver)
    driver._hypervisor = FakeZVMHypervisor()
    return driver


class FakeZVMHypervisor:
    """What the z/VM driver asks its hypervisor for here."""

    def get_available_resource(self):
        return {'vcpus': 4, 'memory_mb': 8192, 'disk_total': 100}


def vmware(testcase):
    """Needs a Nova test case: the cluster's figures are patched in for
    the case's lifetime."""
    driver = object.__new__(vmware_driver.VMwareVCDriver)
    driver._session = driver._cluster_ref = driver._datastore_regex = None
    stats = {'cpu': {'vcpus': 8, 'max_vcpus_per_host': 8},
             'mem': {'total': 16384, 'max_mem_mb_per_host': 16384}}
    datastore = collections.namedtuple('Datastore', 'capacity freespace')
    testcase.useFixture(test.fixtures.MockPatch(
        'nova.virt.vmwareapi.vm_util.get_stats_from_cluster',
        return_value=stats))
    testcase.useFixture(test.fixtures.MockPatch(
        'nova.virt.vmwareapi.ds_util.get_available_datastores',
        return_value=[datastore(2 ** 40, 2 ** 39)]))
    return driver


def ironic(node_traits=('CUSTOM_INSPECTED',), cpu_arch='x86_64'):
    driver = ironic_driver.IronicDriver(None)
    driver.node_cache[NODE] = ironic_utils.get_test_node(
        id=NODE, resource_class='baremetal', traits=list(node_traits),
        properties={'cpu_arch': cpu_arch})
    return driver
