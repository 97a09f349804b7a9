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

"""The driver records' ``replaces_provider_traits`` against Nova's own
``update_provider_tree``.

Each driver of the table is called, as the resource tracker calls it, on a
provider tree whose node carries a trait nova-compute does not own (a
reporter's ``CUSTOM_TROVE``): the record says whether it survives. The
hypervisor behind each driver is stubbed the way Nova's own unit tests stub
it (a fake cluster for VMware, a fake z/VM hypervisor, a cached Ironic node
from Nova's own test helpers); libvirt runs on Nova's fakelibvirt inside its
functional harness, a real nova-compute with a real Placement. Each
record's ``replaces_source`` names ``update_provider_tree``'s lines in the
installed Nova.
"""

import collections
import importlib
from importlib import metadata
import inspect
import os
import re

import pytest

pytest.importorskip('nova')

import nova  # noqa: E402
from nova import test  # noqa: E402
from nova.compute import provider_tree as provider_tree_mod  # noqa: E402
from nova.tests.functional.libvirt import base as libvirt_base  # noqa: E402
from nova.tests.unit.virt.ironic import utils as ironic_utils  # noqa: E402
from nova.virt import fake as fake_driver  # noqa: E402
from nova.virt.ironic import driver as ironic_driver  # noqa: E402
from nova.virt.vmwareapi import driver as vmware_driver  # noqa: E402
from nova.virt.zvm import driver as zvm_driver  # noqa: E402

from tests.nova import base  # noqa: E402
from virt_capabilities import drivers  # noqa: E402

#: ``replaces_source``: update_provider_tree's lines in 34.0.0, then 31.0.0.
SOURCE = r'^(nova/[\w/]+\.py):(\d+)-(\d+) \(31\.0\.0: (\d+)-(\d+)\): '
NODE = 'node-1'
FOREIGN = 'CUSTOM_TROVE'
#: What the resource tracker keeps (it adds it back after the driver).
NOVA_OWN = 'COMPUTE_NODE'


def tree_with_foreign_trait():
    tree = provider_tree_mod.ProviderTree()
    tree.new_root(NODE, 'f0e1d2c3-b4a5-4697-8899-aabbccddeeff')
    tree.update_traits(NODE, [FOREIGN, NOVA_OWN])
    return tree


def fake():
    return fake_driver.FakeDriver(None)


def zvm():
    driver = object.__new__(zvm_driver.ZVMDriver)
    driver._hypervisor = FakeZVMHypervisor()
    return driver


class FakeZVMHypervisor:
    """What the z/VM driver asks its hypervisor for here."""

    def get_available_resource(self):
        return {'vcpus': 4, 'memory_mb': 8192, 'disk_total': 100}


def vmware(testcase):
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


def ironic(node_traits=('CUSTOM_INSPECTED',)):
    driver = ironic_driver.IronicDriver(None)
    driver.node_cache[NODE] = ironic_utils.get_test_node(
        id=NODE, resource_class='baremetal', traits=list(node_traits))
    return driver


class TestUpdateProviderTree(test.NoDBTestCase):
    def _clear_attrs(self):
        pass  # as tests/nova/base.py: pytest deletes them itself

    def survives(self, driver):
        tree = tree_with_foreign_trait()
        driver.update_provider_tree(tree, NODE)
        return FOREIGN in tree.data(NODE).traits

    def check(self, key, driver):
        record = drivers.DRIVERS[key]
        self.assertEqual(not record.replaces_provider_traits,
                         self.survives(driver),
                         '%s: %s' % (key, record.replaces_source))

    def test_fake(self):
        self.check('fake.FakeDriver', fake())

    def test_zvm(self):
        self.check('zvm.ZVMDriver', zvm())

    def test_vmware(self):
        self.check('vmwareapi.VMwareVCDriver', vmware(self))

    def test_ironic(self):
        self.check('ironic.IronicDriver', ironic())

    def test_ironic_takes_the_nodes_traits(self):
        """Where a reporter must write instead: the node's traits are what
        the provider gets."""
        tree = tree_with_foreign_trait()
        ironic(node_traits=(FOREIGN,)).update_provider_tree(tree, NODE)
        self.assertEqual({FOREIGN}, set(tree.data(NODE).traits))

    def test_every_driver_says_where(self):
        for key, record in drivers.DRIVERS.items():
            self.assertRegex(record.replaces_source, SOURCE, key)

    def test_the_recorded_lines_start_at_update_provider_tree(self):
        modules = {'libvirt.LibvirtDriver': 'nova.virt.libvirt.driver',
                   'vmwareapi.VMwareVCDriver': 'nova.virt.vmwareapi.driver',
                   'zvm.ZVMDriver': 'nova.virt.zvm.driver',
                   'fake.FakeDriver': 'nova.virt.fake',
                   'ironic.IronicDriver': 'nova.virt.ironic.driver'}
        version = metadata.version('nova')
        for key, record in drivers.DRIVERS.items():
            cls = getattr(importlib.import_module(modules[key]),
                          key.split('.')[-1])
            lines, first = inspect.getsourcelines(cls.update_provider_tree)
            path, start, end, old_start, old_end = re.match(
                SOURCE, record.replaces_source).groups()
            self.assertEqual(path, os.path.relpath(
                inspect.getsourcefile(cls), os.path.dirname(
                    os.path.dirname(nova.__file__))))
            recorded = {'34.0.0': (start, end),
                        '31.0.0': (old_start, old_end)}[version]
            self.assertEqual((first, first + len(lines) - 1),
                             tuple(int(n) for n in recorded), key)


class TestLibvirtKeepsForeignTraits(libvirt_base.ServersTestBase):
    """libvirt on Nova's fakelibvirt: a real nova-compute and Placement;
    the trait written to its provider survives its refresh and push."""

    def _clear_attrs(self):
        pass

    def _setup_scheduler_service(self):
        self.flags(api_paste_config=base.API_PASTE, group='wsgi')
        return super()._setup_scheduler_service()

    def test_libvirt(self):
        self.start_compute('libvirt-1')
        uuid = self.compute_rp_uuids['libvirt-1']
        self.placement.put('/traits/%s' % FOREIGN, None, version='1.6')
        current = self.placement.get(
            '/resource_providers/%s/traits' % uuid, version='1.6').body
        self.placement.put(
            '/resource_providers/%s/traits' % uuid,
            {'traits': current['traits'] + [FOREIGN],
             'resource_provider_generation':
                 current['resource_provider_generation']}, version='1.6')
        compute = self.computes['libvirt-1']
        compute.manager.rt.reportclient.clear_provider_cache()
        self._run_periodics()
        traits = set(self._get_provider_traits(uuid))
        self.assertIn('COMPUTE_NODE', traits)  # nova-compute did push
        self.assertEqual(
            not drivers.DRIVERS['libvirt.LibvirtDriver']
            .replaces_provider_traits, FOREIGN in traits)
