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

"""The boots an upgrade runs, judged: which fail the phase, which a
restart excuses, and how the stream is drained around a stop."""

import threading

import pytest

from gate_cloud import boot_cases
from gate_cloud import boot_stream
from gate_cloud import layout

#: The gate cloud's hosts (gate_cloud/services/nova_compute.py): what each
#: case may land on, written out here rather than read from the code.
QCOW2 = boot_cases.Case('qcow2', 'img-q', frozenset({'libvirt-qemu'}))
RAW = boot_cases.Case('raw', 'img-r', frozenset({'libvirt-qemu',
                                                 'fake-raw'}))
VMDK = boot_cases.Case('vmdk', 'img-v', frozenset(), ('vmdk',))
CASES = [QCOW2, RAW, VMDK]
NO_HOST = 'No valid host was found. '
OURS = ('No valid host was found. Scheduling failed: No compute host boots '
        'vmdk images (COMPUTE_IMAGE_TYPE_VMDK); this cloud boots raw.')


def boot(case, start, end, status=None, host=None, fault='', error=''):
    return boot_cases.Boot(case.label, start, end, 'id-%s' % start, status,
                           host, fault, error)


@pytest.mark.parametrize('case,record,verdict', [
    (QCOW2, boot(QCOW2, 0, 1, 'ACTIVE', 'libvirt-qemu'), 'ok'),
    (QCOW2, boot(QCOW2, 0, 1, 'ACTIVE', 'fake-raw'), 'wrong-host'),
    (QCOW2, boot(QCOW2, 0, 1, 'ERROR', None, OURS), 'filter-refusal'),
    (QCOW2, boot(QCOW2, 0, 1, 'ERROR', None, NO_HOST), 'failed'),
    (QCOW2, boot(QCOW2, 0, 1, error='POST answered 503'), 'failed'),
    (VMDK, boot(VMDK, 0, 1, 'ERROR', None, OURS), 'ok'),
    (VMDK, boot(VMDK, 0, 1, 'ERROR', None, NO_HOST), 'failed'),
    (VMDK, boot(VMDK, 0, 1, 'ACTIVE', 'libvirt-qemu'), 'wrong-host'),
])
def test_each_boot_is_judged_by_its_case(case, record, verdict):
    assert boot_cases.judge(case, record) == verdict


def windows(*spans):
    out = boot_stream.Windows()
    out.spans = list(spans)
    return out


def test_a_boot_refused_while_nova_api_restarts_is_counted_apart():
    during = boot(QCOW2, 10, 12, error='POST: connection refused')
    result = boot_stream.summary(CASES, [during], windows(
        ('nova-api', 9, 11)))
    assert result['failed'] == 0
    assert result['refused'] == {'nova-api': 1}
    assert result['attempted'] == 1


def test_the_same_failure_outside_every_window_fails_the_phase():
    after = boot(QCOW2, 20, 22, error='POST: connection refused')
    result = boot_stream.summary(CASES, [after], windows(
        ('nova-api', 9, 11)))
    assert result['failed'] == 1
    assert result['refused'] == {}
    assert 'qcow2' in result['failures'][0]


def test_a_restart_no_boot_may_be_lost_to_excuses_nothing():
    """nova-conductor and the computes are drained before they stop: a
    boot lost there is a failure."""
    lost = boot(RAW, 10, 200, 'ERROR', None, 'Build of instance aborted')
    result = boot_stream.summary(CASES, [lost], windows(
        ('nova-conductor', 9, 30), ('nova-compute', 40, 50)))
    assert result['failed'] == 1
    assert 'nova-conductor' in result['failures'][0]


@pytest.mark.parametrize('record', [
    boot(QCOW2, 10, 12, 'ACTIVE', 'fake-raw'),          # wrong host
    boot(QCOW2, 10, 12, 'ERROR', None, OURS),           # the filters refused
    boot(VMDK, 10, 12, 'ERROR', None, NO_HOST),         # fault names nothing
])
def test_what_the_filters_get_wrong_fails_even_inside_a_window(record):
    result = boot_stream.summary(CASES, [record], windows(
        ('nova-scheduler', 9, 13), ('nova-api', 9, 13)))
    if record.case == 'vmdk':
        # A vmdk boot refused by a restarting API cannot name vmdk: that
        # is a refusal; the same boot outside a window is a failure.
        assert result['refused'] == {'nova-scheduler': 1}
        outside = boot_stream.summary(CASES, [record], windows())
        assert outside['failed'] == 1
    else:
        assert result['failed'] == 1
        assert result['refused'] == {}


def test_a_failure_says_what_nova_said_of_that_boot(tmp_path, monkeypatch):
    monkeypatch.setattr(layout, 'STATE', tmp_path)
    (tmp_path / 'logs').mkdir()
    (tmp_path / 'logs' / 'nova-scheduler-app.log').write_text(
        '2026-11-26 11:26:01.922 7119 DEBUG nova.filters [None req-1 a b - '
        '- default default] Filter ComputeFilter returned 0 host(s)\n')
    failed = boot(QCOW2, 20, 22, 'ERROR', None, NO_HOST)
    failed.request_id = 'req-1'
    result = boot_stream.summary(CASES, [failed], windows())
    assert result['failures'][0].endswith(
        'req-1 said: nova-scheduler: DEBUG Filter ComputeFilter returned 0 '
        'host(s)')


def test_every_boot_is_counted_per_case():
    boots = [boot(QCOW2, 1, 2, 'ACTIVE', 'libvirt-qemu'),
             boot(RAW, 3, 4, 'ACTIVE', 'fake-raw'),
             boot(VMDK, 5, 6, 'ERROR', None, OURS),
             boot(RAW, 7, 8, 'ACTIVE', 'fake-trove')]
    result = boot_stream.summary(CASES, boots, windows())
    assert result['by_case'] == {'qcow2': {'attempted': 1, 'ok': 1},
                                 'raw': {'attempted': 2, 'ok': 1},
                                 'vmdk': {'attempted': 1, 'ok': 1}}
    assert result['failed'] == 1
    assert 'fake-trove' in result['failures'][0]


def test_a_window_is_what_a_restart_took():
    spans = boot_stream.Windows()
    with spans.restart('placement'):
        pass
    [(name, start, end)] = spans.spans
    assert name == 'placement' and start <= end
    inside = boot(QCOW2, start, end, error='x')
    assert spans.overlapping(inside) == ['placement']
    assert spans.overlapping(boot(QCOW2, end + 1, end + 2)) == []


class Gate:
    """boot_once stand-in: each boot blocks until released."""

    def __init__(self):
        self.started = threading.Semaphore(0)
        self.release = threading.Semaphore(0)

    def __call__(self, client, case, name, delete=True):
        self.started.release()
        self.release.acquire()
        return boot_cases.Boot(case.label, 0.0, 0.0, 'id', 'ACTIVE',
                               'libvirt-qemu')


@pytest.fixture
def stream(monkeypatch):
    gate = Gate()
    monkeypatch.setattr(boot_cases, 'boot_once', gate)
    monkeypatch.setattr(boot_stream.rest, 'Client',
                        lambda *a, **k: object())
    out = boot_stream.Stream('pw', [QCOW2])
    out.gate = gate
    yield out
    out._stopping.set()
    gate.release.release()
    if out.ident is not None:
        out.join(timeout=30)


def test_drained_begins_only_once_the_boot_in_flight_ended(stream):
    stream._busy = True  # a boot in flight
    seen = []

    def drain():
        with stream.drained():
            seen.append(stream._busy)
    drainer = threading.Thread(target=drain)
    drainer.start()
    with stream._cond:  # the boot ends
        stream._busy = False
        stream._cond.notify_all()
    drainer.join(timeout=30)
    assert seen == [False]
    assert stream._paused == 0


def test_no_boot_starts_while_drained(stream):
    with stream.drained():
        stream.start()
        assert stream.held.wait(timeout=30)
        assert not stream.boots
    assert stream.gate.started.acquire(timeout=30)  # the next, after
    stream.gate.release.release()
