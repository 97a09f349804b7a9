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

"""How the rollback and removal phases read nova.conf, units and traits."""

from gate_cloud import devstack_node as node
from gate_cloud import devstack_removal
from gate_cloud import devstack_rollback

BEFORE = {'p1': {'COMPUTE_IMAGE_TYPE_RAW', 'HW_ARCH_X86_64', 'CUSTOM_TROVE'}}
RECORDS = {'p1': {'HW_ARCH_X86_64', 'CUSTOM_TROVE'}}


def test_a_clean_removal_leaves_exactly_the_other_traits():
    after = {'p1': {'COMPUTE_IMAGE_TYPE_RAW'}}
    assert devstack_removal.judge(BEFORE, after, RECORDS) == ([], 0)


def test_a_recorded_trait_left_behind_is_named():
    after = {'p1': {'COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_TROVE'}}
    problems, _ = devstack_removal.judge(BEFORE, after, RECORDS)
    assert problems == ['p1 still carries CUSTOM_TROVE']


def test_a_trait_of_nova_compute_s_taken_is_lost():
    problems, lost = devstack_removal.judge(BEFORE, {'p1': set()}, RECORDS)
    assert lost == 1
    assert 'other traits changed' in problems[0]


def test_the_unit_s_config_files_in_order():
    argv = ['/venv/bin/virt-capabilities', 'report', '--config-file',
            '/etc/nova/nova-cpu.conf', '--config-file',
            '/etc/nova/nova-fake.conf-1', '--interval', '10']
    assert node.config_files(argv) == [
        '/etc/nova/nova-cpu.conf', '/etc/nova/nova-fake.conf-1']


def test_a_section_comes_out_whole_and_nothing_else():
    text = ('[DEFAULT]\nhost = a\n[image_type_filter]\nenforce = True\n'
            '\n[scheduler]\nx = 1\n')
    assert devstack_rollback.without_section(text, 'image_type_filter') == (
        '[DEFAULT]\nhost = a\n[scheduler]\nx = 1\n')
    assert devstack_rollback.without_section(text, 'absent') == text
