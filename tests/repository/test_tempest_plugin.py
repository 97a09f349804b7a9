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

"""The tempest plugin's own logic (contrib/tempest), without a cloud.

Its expectations must come from os-traits and Placement, never from this
project's code: these tests check them against os-traits' literal names.
"""

import os
import sys

import pytest

from tests import helpers

REPO = helpers.REPO
sys.path.insert(0, os.path.join(REPO, 'contrib', 'tempest'))
from image_type_tempest_plugin import expectations  # noqa: E402
from image_type_tempest_plugin import scheduler_log  # noqa: E402

sys.path.pop(0)


def test_plugin_imports_nothing_of_the_project():
    plugin = os.path.join(REPO, 'contrib', 'tempest',
                          'image_type_tempest_plugin')
    for root, _, files in os.walk(plugin):
        for name in files:
            if name.endswith('.py'):
                with open(os.path.join(root, name)) as f:
                    text = f.read()
                for package in ('image_type_filter', 'image_type_common',
                                'virt_capabilities'):
                    assert 'import %s' % package not in text, name
                    assert 'from %s' % package not in text, name


@pytest.mark.parametrize('disk_format,trait', [
    ('raw', 'COMPUTE_IMAGE_TYPE_RAW'), ('qcow2', 'COMPUTE_IMAGE_TYPE_QCOW2'),
    ('vmdk', 'COMPUTE_IMAGE_TYPE_VMDK'), ('iso', 'COMPUTE_IMAGE_TYPE_ISO'),
    ('QCOW2', 'COMPUTE_IMAGE_TYPE_QCOW2'), ('bogus', None)])
def test_trait_for_format_is_novas_rule(disk_format, trait):
    assert expectations.trait_for_format(disk_format) == trait


FLEET = expectations.Fleet({
    'vm': ['COMPUTE_IMAGE_TYPE_RAW', 'COMPUTE_IMAGE_TYPE_QCOW2',
           'HW_ARCH_X86_64', 'COMPUTE_STORAGE_BUS_VIRTIO'],
    'fake-raw': ['COMPUTE_IMAGE_TYPE_RAW'],
    'fake-trove': ['COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_TROVE'],
    'fake-none': []})


def test_fleet_hosts():
    assert FLEET.hosts(['COMPUTE_IMAGE_TYPE_RAW'], ['CUSTOM_TROVE']) == {
        'vm', 'fake-raw'}
    assert FLEET.hosts(['COMPUTE_IMAGE_TYPE_QCOW2']) == {'vm'}
    assert FLEET.hosts(['COMPUTE_IMAGE_TYPE_VMDK']) == set()
    assert FLEET.hosts() == {'vm', 'fake-raw', 'fake-trove', 'fake-none'}
    assert FLEET.bootable_formats() == ['qcow2', 'raw']


def test_unsatisfied_property_is_one_no_host_has():
    assert FLEET.unsatisfied_property('architecture') == (
        'hw_architecture', 's390x', 'HW_ARCH_S390X')
    # xen is first in the list and no host has it.
    assert FLEET.unsatisfied_property('storage_bus') == (
        'hw_disk_bus', 'xen', 'COMPUTE_STORAGE_BUS_XEN')
    everything = expectations.Fleet({'h': [
        'HW_ARCH_S390X', 'HW_ARCH_PPC64LE', 'HW_ARCH_AARCH64',
        'HW_ARCH_X86_64']})
    assert everything.unsatisfied_property('architecture') is None


def test_every_family_trait_is_an_os_traits_name():
    import os_traits
    for family, (_, prefix, values) in expectations.FAMILIES.items():
        known = set(os_traits.get_traits(prefix=prefix))
        for value in values:
            assert prefix + value.upper().replace('-', '_') in known, (
                family, value)


def test_pid_of_both_log_formats():
    assert scheduler_log.pid_of(
        '2026-11-24 02:19:16.328 22737 DEBUG nova.scheduler.request_filter '
        '[None req-1 admin admin] Request filter ...') == 22737
    assert scheduler_log.pid_of(
        "DEBUG nova.scheduler.request_filter [None req-1 demo demo] Request "
        "filter 'image_type_filter.x' took 0.0 seconds {{(pid=4242) "
        "wrapper /opt/stack/nova/nova/scheduler/request_filter.py:48}}") \
        == 4242
    assert scheduler_log.pid_of('Traceback (most recent call last):') is None


def test_scheduler_log_reads_only_new_lines(tmp_path):
    path = tmp_path / 'nova-scheduler.log'
    path.write_text('old req-1 image_type_filter\n')
    log = scheduler_log.SchedulerLog(str(path))
    with open(path, 'a') as f:
        f.write('2026-11-24 02:00:00.000 7 DEBUG x [req-1] image_type_filter'
                '\n2026-11-24 02:00:00.001 8 DEBUG x [req-2] other\n')
    lines = log.new_lines()
    assert scheduler_log.lines_with(lines, 'req-1', 'image_type_filter') == [
        lines[0]]
    assert len(lines) == 2
