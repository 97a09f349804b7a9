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

"""The reporter gives nova-compute's answer: compared with Nova's own code.

For each nova.conf, our image-type traits must equal what the installed
Nova's driver reports through ``capabilities_as_traits`` (which applies
``[compute] image_type_exclude_list`` with Nova's own check), so the two
never fight over a trait. Libvirt's driver is built under Nova's fake
libvirt, exactly as Nova's unit tests build it.
"""

import itertools
import types

import pytest

pytest.importorskip('nova')

import fixtures  # noqa: E402
from nova import test  # noqa: E402
from nova.tests import fixtures as nova_fixtures  # noqa: E402
from nova.virt import driver as nova_driver  # noqa: E402
from nova.virt import fake as nova_fake  # noqa: E402
from oslo_utils import importutils  # noqa: E402

from image_type_common import exceptions  # noqa: E402
from virt_capabilities import conf as vc_conf  # noqa: E402
from virt_capabilities import drivers  # noqa: E402
from virt_capabilities import settings  # noqa: E402

STATIC = {
    'fake.FakeDriver': 'nova.virt.fake.FakeDriver',
    'fake.FakeDriverWithoutFakeNodes':
        'nova.virt.fake.FakeDriverWithoutFakeNodes',
    'ironic.IronicDriver': 'nova.virt.ironic.driver.IronicDriver',
    'vmwareapi.VMwareVCDriver': 'nova.virt.vmwareapi.driver.VMwareVCDriver',
    'zvm.ZVMDriver': 'nova.virt.zvm.driver.ZVMDriver',
}
EXCLUDES = [[], ['raw'], ['iso', 'vmdk'], ['qcow2', 'ami', 'raw', 'ploop']]
PREFIX = 'COMPUTE_IMAGE_TYPE_'


def nova_traits(driver_with_capabilities):
    traits = nova_driver.ComputeDriver.capabilities_as_traits(
        driver_with_capabilities)
    return {t for t, supported in traits.items()
            if supported and t.startswith(PREFIX)}


class TestSameAnswerAsNovaCompute(test.NoDBTestCase):
    def _clear_attrs(self):
        pass  # see tests/nova/base.py

    def ours(self, text):
        path = self.useFixture(fixtures.TempDir()).join('nova.conf')
        with open(path, 'w') as f:
            f.write(text)
        return drivers.capabilities(settings.NodeSettings.from_conf(
            vc_conf.load([path]))).traits

    def exclude(self, entries):
        self.flags(image_type_exclude_list=entries, group='compute')
        return '[compute]\nimage_type_exclude_list = %s\n' % ','.join(
            entries)

    def test_every_static_driver_of_the_installed_nova(self):
        mismatches = []
        for name, path in sorted(STATIC.items()):
            nova_class = importutils.import_class(path)
            for entries in EXCLUDES:
                section = self.exclude(entries)
                nova = nova_traits(types.SimpleNamespace(
                    capabilities=nova_class.capabilities))
                ours = self.ours('[DEFAULT]\ncompute_driver = %s\n%s'
                                 % (name, section))
                if ours != nova:
                    mismatches.append((name, entries, sorted(ours),
                                       sorted(nova)))
        self.assertEqual([], mismatches)

    def test_libvirt_for_every_option_nova_starts_with(self):
        from nova.virt.libvirt import driver as libvirt_driver
        self.useFixture(nova_fixtures.LibvirtFixture())
        mismatches, compared = [], 0
        for images_type, force_raw, virt_type, entries in itertools.product(
                ('default', 'raw', 'flat', 'qcow2', 'lvm', 'rbd', 'ploop'),
                (True, False), ('kvm', 'qemu', 'lxc', 'parallels'),
                EXCLUDES[:3]):
            conf = ('[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n'
                    'force_raw_images = %s\n[libvirt]\nimages_type = %s\n'
                    'virt_type = %s\n%s' % (force_raw, images_type,
                                            virt_type, self.exclude(entries)))
            if images_type == 'rbd' and not force_raw:
                # nova-compute refuses to start (init_host); so do we.
                self.assertRaises(exceptions.ConfigError, self.ours, conf)
                continue
            self.flags(images_type=images_type, virt_type=virt_type,
                       group='libvirt')
            self.flags(force_raw_images=force_raw)
            nova = nova_traits(libvirt_driver.LibvirtDriver(
                nova_fake.FakeVirtAPI(), True))
            ours = self.ours(conf)
            compared += 1
            if ours != nova:
                mismatches.append((images_type, force_raw, virt_type,
                                   entries, sorted(ours), sorted(nova)))
        self.assertEqual([], mismatches)
        self.assertEqual(7 * 2 * 4 * 3 - 4 * 3, compared)

    def test_exclude_entries_nova_would_ignore_are_refused(self):
        for entry in ('QCOW2', 'qcow3'):
            self.exclude([entry])
            nova = nova_traits(types.SimpleNamespace(
                capabilities=nova_fake.FakeDriver.capabilities))
            # Nova excludes nothing; we refuse rather than disagree.
            self.assertEqual({PREFIX + 'RAW'}, nova)
            self.assertRaises(
                exceptions.ConfigError, self.ours,
                '[DEFAULT]\ncompute_driver = fake.FakeDriver\n'
                '[compute]\nimage_type_exclude_list = %s\n' % entry)
