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

"""An operator's first hour, inside Nova: isolation holds from the first
second whatever order services start in, and faults say why."""

import pytest

pytest.importorskip('nova')

from tests.nova import base  # noqa: E402

RESERVED = 'CUSTOM_TROVE'
TAG = {'trait:%s' % RESERVED: 'required'}


class TestIsolationFromTheFirstSecond(base.InsideNova):
    """The reserved host's reporter runs after nova-scheduler has started
    and answered boots: the normal order on a new cloud."""

    scheduler_options = {('image_isolation', 'enabled'): True,
                         ('image_isolation', 'rules'): [RESERVED]}

    def test_untagged_boots_avoid_the_trait_the_moment_it_appears(self):
        self.flags(instances=20, cores=40, ram=40 * 1024, group='quota')
        self._start_compute('trove-host')
        self.boot(base.RAW_IMAGE)  # the scheduler has answered a boot
        self.assertEqual(0, self.run_reporter(
            'trove-host',
            '[virt_capabilities]\ncustom_traits = %s\n' % RESERVED))
        uuid = self._get_provider_uuid_by_host('trove-host')
        self.assertIn(RESERVED, self._get_provider_traits(uuid))
        untagged = [self.host_of(self.boot(base.RAW_IMAGE))
                    for _ in range(8)]
        self.assertEqual(['compute'] * 8, untagged)
        tagged = self.image('raw', **TAG)
        self.assertEqual(['trove-host'] * 3,
                         [self.host_of(self.boot(tagged)) for _ in range(3)])


class TestFaultsSayWhy(base.InsideNova):
    scheduler_options = {('scheduler', 'filter_hosts_by_image_type_support'):
                         True,
                         ('image_isolation', 'enabled'): True,
                         ('image_isolation', 'rules'): [RESERVED]}

    def test_a_format_no_host_boots_names_the_format_in_the_fault(self):
        # Nova's fake computes report COMPUTE_IMAGE_TYPE_RAW only.
        failed = self.boot(base.VHD_IMAGE, expected='ERROR')
        message = failed['fault']['message']
        self.assertIn('No valid host', message)
        self.assertIn('No compute host boots vhd images '
                      '(COMPUTE_IMAGE_TYPE_VHD); this cloud boots raw.',
                      message)

    def test_a_reserved_trait_nobody_carries_is_named_in_the_fault(self):
        failed = self.boot(self.image('raw', **TAG), expected='ERROR')
        message = failed['fault']['message']
        self.assertIn('No valid host', message)
        self.assertIn('No compute host carries reserved trait(s) '
                      'CUSTOM_TROVE', message)


class TestARefusalIsNeverOld(base.InsideNova):
    """A boot is refused for "no host carries it" only on an answer read
    after the cached one said so: the trait or the format appears on a
    host after nova-scheduler has refused it, and the very next boot that
    needs it lands there. The refresh interval is an hour, so nothing here
    depends on how long a step takes."""

    scheduler_options = {('scheduler', 'filter_hosts_by_image_type_support'):
                         True,
                         ('image_isolation', 'enabled'): True,
                         ('image_isolation', 'rules'): [RESERVED],
                         ('image_type_filter', 'traits_refresh_interval'):
                         3600.0}

    def test_a_reserved_trait_that_appears_takes_the_next_tagged_boot(self):
        self._start_compute('trove-host')
        tagged = self.image('raw', **TAG)
        failed = self.boot(tagged, expected='ERROR')
        self.assertIn('No compute host carries reserved trait(s) '
                      'CUSTOM_TROVE', failed['fault']['message'])
        self.assertEqual(0, self.run_reporter(
            'trove-host',
            '[virt_capabilities]\ncustom_traits = %s\n' % RESERVED))
        self.assertEqual('trove-host', self.host_of(self.boot(tagged)))

    def test_a_format_that_appears_takes_the_next_boot_of_it(self):
        self._start_compute('vhd-host')
        failed = self.boot(base.VHD_IMAGE, expected='ERROR')
        self.assertIn('No compute host boots vhd images',
                      failed['fault']['message'])
        # The host's driver starts reporting vhd, as nova-compute would
        # after an upgrade: the trait appears on its provider in Placement.
        uuid = self._get_provider_uuid_by_host('vhd-host')
        traits = set(self._get_provider_traits(uuid))
        self._set_provider_traits(uuid, sorted(
            traits | {'COMPUTE_IMAGE_TYPE_VHD'}))
        self.assertEqual('vhd-host', self.host_of(self.boot(base.VHD_IMAGE)))
