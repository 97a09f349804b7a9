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

"""Where each boot of an upgrade may land, from cloud.json; and the
queries a boot made, read back from Placement's own log."""

from gate_cloud import boot_cases
from gate_cloud import layout

#: cloud.json's computes as the gate cloud describes them (the image types
#: nova-compute 34 reports: NOVA_FORMATS in
#: tests/unit/gate_cloud/test_gate_cloud.py).
CLOUD = {
    'computes': [
        {'host': 'libvirt-qemu', 'image_types': ['aki', 'ami', 'ari', 'iso',
                                                  'qcow2', 'raw'],
         'custom_traits': []},
        {'host': 'fake-raw', 'image_types': ['raw'], 'custom_traits': []},
        {'host': 'fake-trove', 'image_types': ['raw'],
         'custom_traits': ['CUSTOM_TROVE']},
        {'host': 'fake-noraw', 'image_types': [], 'custom_traits': []},
    ],
    'reserved_trait': 'CUSTOM_TROVE',
    'image_files': {f: '/x.' + f for f in ('iso', 'qcow2', 'raw', 'vdi',
                                           'vhdx', 'vmdk')},
}

#: Two lines of Placement 16's oslo.log file as the gate cloud wrote them:
#: a reserved image's boot and an untagged one (other request ids).
LOG = (
    '2026-11-26 06:31:37.557 22836 INFO placement.requestlog '
    '[req-073fcf8d-3d00-4165-ac9d-873257c8e486 req-f54175b9-b5d6-4667-ba02-'
    'ee33b9c0b078 0b7f1d040a6340e9b0e5b18e0d2aa7aa 11a4a4e397d24e479833a71b2'
    '5ea05cf - - default default] 127.0.0.1 "GET /allocation_candidates?'
    'limit=1000&required=CUSTOM_TROVE&resources=DISK_GB%3A1%2CMEMORY_MB%3A1'
    '28%2CVCPU%3A1&root_required=COMPUTE_IMAGE_TYPE_RAW%2CCUSTOM_TROVE%2C%2'
    '1COMPUTE_STATUS_DISABLED" status: 200 len: 981 microversion: 1.36\n'
    '2026-11-26 06:31:37.600 22836 INFO placement.requestlog '
    '[req-073fcf8d-3d00-4165-ac9d-873257c8e486 req-aaaaaaaa-b5d6-4667-ba02-'
    'ee33b9c0b078 0b7f1d040a6340e9b0e5b18e0d2aa7aa 11a4a4e397d24e479833a71b2'
    '5ea05cf - - default default] 127.0.0.1 "GET /allocations/5e55d3ae-0864'
    '-43de-a0f4-8826d0942e84" status: 200 len: 257 microversion: 1.28\n'
    '2026-11-26 06:31:38.408 22836 INFO placement.requestlog '
    '[req-20896f65-9bd9-4b93-8d52-19fda791659e req-5e178f09-cab1-4845-8842-'
    '9bdeb37b0977 0b7f1d040a6340e9b0e5b18e0d2aa7aa 11a4a4e397d24e479833a71b2'
    '5ea05cf - - default default] 127.0.0.1 "GET /allocation_candidates?'
    'limit=1000&member_of=%21in%3Aaa11%2Cbb22&resources=DISK_GB%3A1%2CMEMORY_MB%3A'
    '128%2CVCPU%3A1&root_required=COMPUTE_IMAGE_TYPE_RAW%2C%21COMPUTE_STATU'
    'S_DISABLED%2C%21CUSTOM_TROVE" status: 200 len: 3172 microversion: '
    '1.36\n')


def test_each_format_may_land_only_where_it_is_reported_untagged():
    assert boot_cases.untagged_hosts(CLOUD, 'raw') == {'libvirt-qemu',
                                                       'fake-raw'}
    assert boot_cases.untagged_hosts(CLOUD, 'iso') == {'libvirt-qemu'}
    assert boot_cases.untagged_hosts(CLOUD, 'vmdk') == set()
    assert boot_cases.reserved_hosts(CLOUD) == {'fake-trove'}
    assert boot_cases.bootable_formats(CLOUD) == ['iso', 'qcow2', 'raw']


def test_a_boots_queries_are_read_by_its_request_id(tmp_path):
    log = tmp_path / 'placement-app.log'
    log.write_text(LOG)
    [reserved] = boot_cases.queries(
        'req-073fcf8d-3d00-4165-ac9d-873257c8e486', log)
    assert reserved['required'] == ['CUSTOM_TROVE']
    assert boot_cases.root_required(reserved) == {
        'COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_TROVE', '!COMPUTE_STATUS_DISABLED'}
    [untagged] = boot_cases.queries(
        'req-20896f65-9bd9-4b93-8d52-19fda791659e', log)
    assert '!CUSTOM_TROVE' in boot_cases.root_required(untagged)
    assert untagged['member_of'] == ['!in:aa11,bb22']
    assert boot_cases.queries('req-00000000-0000-0000-0000-000000000000',
                              log) == []


#: One boot's lines as the gate cloud's Nova 34 and Placement 16 wrote
#: them (shortened paths), with another boot's line between.
BOOT = 'req-3e5d385e-9351-447a-a871-46120f7faef0'
SCHEDULER_LOG = (
    '2026-11-26 11:26:01.621 7119 DEBUG nova.scheduler.manager [None %s '
    'ac36 c94a - - default default] Starting to schedule for instances: '
    "['544f149e'] select_destinations manager.py:215\n"
    '2026-11-26 11:26:01.922 7119 DEBUG nova.filters [None %s ac36 c94a - '
    '- default default] Filter ComputeFilter returned 0 host(s) '
    'get_filtered_objects filters.py:102\n'
    '2026-11-26 11:26:01.930 7117 INFO nova.scheduler.manager [None '
    'req-9bb4101d-49b0-42af-b4a5-596c0442bdcf ac36 c94a - - default '
    'default] Got no allocation candidates from the Placement API.\n'
    '2026-11-26 11:26:01.931 7119 WARNING nova.scheduler.utils [None %s '
    'ac36 c94a - - default default] Unable to submit allocation for '
    'instance 544f149e (409 conflict)\n') % (BOOT, BOOT, BOOT)
PLACEMENT_BOOT_LOG = (
    '2026-11-26 11:26:01.700 22836 INFO placement.requestlog [%s '
    'req-f541 0b7f 11a4 - - default default] 127.0.0.1 "GET '
    '/allocation_candidates?limit=1000" status: 200 len: 981 '
    'microversion: 1.36\n'
    '2026-11-26 11:26:01.929 22836 INFO placement.requestlog [%s '
    'req-f542 0b7f 11a4 - - default default] 127.0.0.1 "PUT '
    '/allocations/544f149e" status: 409 len: 300 microversion: 1.36\n'
    ) % (BOOT, BOOT)


def test_a_wrong_boots_cause_is_read_from_every_log_by_its_request_id(
        tmp_path):
    (tmp_path / 'nova-scheduler-app.log').write_text(SCHEDULER_LOG)
    (tmp_path / 'placement-app.log').write_text(PLACEMENT_BOOT_LOG)
    story = boot_cases.why(BOOT, tmp_path)
    # The host filter that removed every host, the failed claim and
    # Placement's refusal; not the routine lines, not the other boot's.
    assert story == [
        'nova-scheduler: DEBUG Filter ComputeFilter returned 0 host(s) '
        'get_filtered_objects filters.py:102',
        'nova-scheduler: WARNING Unable to submit allocation for instance '
        '544f149e (409 conflict)',
        'placement: INFO 127.0.0.1 "PUT /allocations/544f149e" status: 409 '
        'len: 300 microversion: 1.36',
    ]
    assert boot_cases.why('req-00000000-0000-0000-0000-000000000000',
                          tmp_path) == []


def test_the_failure_line_carries_the_cause_and_names_the_story_file(
        tmp_path, monkeypatch):
    monkeypatch.setattr(layout, 'STATE', tmp_path)
    (tmp_path / 'logs').mkdir()
    (tmp_path / 'logs' / 'nova-scheduler-app.log').write_text(SCHEDULER_LOG)
    case = boot_cases.Case('disk-bus', 'image-id', frozenset({'vm'}))
    record = boot_cases.Boot('disk-bus', 0.0, status='ERROR',
                             fault='No valid host was found.')
    line = boot_cases.failure('before', case, record, 'failed', BOOT)
    assert line.startswith('before: a disk-bus boot failed (No valid host')
    assert 'Filter ComputeFilter returned 0 host(s)' in line
    assert str(tmp_path / 'logs' / 'failed-boots.log') in line
    assert 'Unable to submit allocation' in (
        tmp_path / 'logs' / 'failed-boots.log').read_text()
    # Without a request id (the create itself failed) the line is as
    # before: nothing to read.
    assert boot_cases.failure('before', case, record, 'failed') == (
        'before: a disk-bus boot failed (No valid host was found.)')
