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

"""Where a server landed, judged: the expected answers from os-traits'
names and the fleet's groups."""

import os_traits

from benchmarks.fleet import shape
from benchmarks.fleet import verdict

RAW_HOST = {os_traits.COMPUTE_IMAGE_TYPE_RAW}
LIBVIRT_HOST = {os_traits.COMPUTE_IMAGE_TYPE_RAW,
                os_traits.COMPUTE_IMAGE_TYPE_QCOW2}
VMWARE_HOST = {os_traits.COMPUTE_IMAGE_TYPE_VMDK,
               os_traits.COMPUTE_IMAGE_TYPE_ISO}
TROVE_HOST = LIBVIRT_HOST | {'CUSTOM_TROVE'}


def judge(kind, traits, arch='x86_64', status='ACTIVE'):
    return verdict.judge(status, shape.image_kind(kind), traits, arch)


def test_a_server_where_it_belongs_has_no_problem():
    assert judge('raw', RAW_HOST) == []
    assert judge('qcow2', LIBVIRT_HOST) == []
    assert judge('vmdk', VMWARE_HOST) == []
    assert judge('trove', TROVE_HOST) == []
    assert judge('armv7', LIBVIRT_HOST, 'armv7l') == []


def test_a_format_the_host_cannot_boot():
    assert judge('qcow2', RAW_HOST) == [verdict.FORMAT]
    assert judge('raw', VMWARE_HOST) == [verdict.FORMAT]


def test_another_architecture():
    assert judge('armv7', LIBVIRT_HOST) == [verdict.ARCHITECTURE]
    assert judge('qcow2', LIBVIRT_HOST, 'armv7l') == [verdict.ARCHITECTURE]


def test_a_reserved_host_without_the_tag():
    assert judge('qcow2', TROVE_HOST) == [verdict.RESERVED]
    assert judge('vmdk', TROVE_HOST) == [verdict.FORMAT, verdict.RESERVED]


def test_error_and_no_host():
    assert judge('raw', RAW_HOST, status='ERROR') == [verdict.ERROR]
    assert judge('raw', None) == [verdict.ERROR]


def test_tally_lists_every_problem():
    assert verdict.tally([[], [verdict.FORMAT], [verdict.FORMAT,
                                                 verdict.RESERVED]]) == {
        verdict.ERROR: 0, verdict.FORMAT: 2, verdict.ARCHITECTURE: 0,
        verdict.RESERVED: 1}
