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

import importlib
from importlib import metadata
import inspect
import os
import re

import pytest

pytest.importorskip('nova')

import nova  # noqa: E402
from nova import test  # noqa: E402
from nova.tests.functional.libvirt import base as libvirt_base  # noqa: E402

from tests.nova import base  # noqa: E402
from tests.nova import virt_drivers  # noqa: E402
from virt_capabilities import drivers  # noqa: E402

#: ``replaces_source``: update_provider_tree's lines in 34.0.0, then 31.0.0.
SOURCE = r'^(nova/[\w/]+\.py):(\d+)-(\d+) \(31\.0\.0: (\d+)-(\d+)\): '
FOREIGN = 'CUSTOM_TROVE'
#: What the resource tracker keeps (it adds it back after the driver).
NOVA_OWN = 'COMPUTE_NODE'
NODE = virt_drivers.NODE


def tree_with_foreign_trait():
    return virt_drivers.provider_tree(FOREIGN, NOVA_OWN)


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
        self.check('fake.FakeDriver', virt_drivers.fake())

    def test_fake_single_node(self):
        self.check('fake.FakeDriverWithoutFakeNodes',
                   virt_drivers.fake_single_node())

    def test_zvm(self):
        self.check('zvm.ZVMDriver', virt_drivers.zvm())

    def test_vmware(self):
        self.check('vmwareapi.VMwareVCDriver', virt_drivers.vmware(self))

    def test_ironic(self):
        self.check('ironic.IronicDriver', virt_drivers.ironic())

    def test_ironic_takes_the_nodes_traits(self):
        """Where a reporter must write instead: the node's traits are what
        the provider gets."""
        self.assertEqual({FOREIGN}, virt_drivers.traits_after_update(
            virt_drivers.ironic(node_traits=(FOREIGN,)), FOREIGN, NOVA_OWN))

    def test_every_driver_says_where(self):
        for key, record in drivers.DRIVERS.items():
            self.assertRegex(record.replaces_source, SOURCE, key)

    def test_the_recorded_lines_start_at_update_provider_tree(self):
        """Only the text can answer this one: the records cite the lines
        of Nova's source a reader checks them against, so the citation is
        held to the installed Nova's file and line numbers. What the
        drivers do is checked by calling them, above."""
        modules = {'libvirt.LibvirtDriver': 'nova.virt.libvirt.driver',
                   'vmwareapi.VMwareVCDriver': 'nova.virt.vmwareapi.driver',
                   'zvm.ZVMDriver': 'nova.virt.zvm.driver',
                   'fake.FakeDriver': 'nova.virt.fake',
                   'fake.FakeDriverWithoutFakeNodes': 'nova.virt.fake',
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
