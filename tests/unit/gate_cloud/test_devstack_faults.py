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

"""The devstack fault phase: what it reads from a reporter's journal and
what it makes of it, and how the job runs it on the node."""

import json
import sys

import pytest

from gate_cloud import GateError
from gate_cloud import devstack_faults as faults
from gate_cloud import devstack_job
from gate_cloud import devstack_node as node

DONE = ('INFO virt_capabilities.service: sync done: 1 provider(s) checked, '
        '0 changed, 0 already in sync by query, 0 conflict(s) retried, '
        '%d failed')
FAILED = (3, 'ERROR virt_capabilities.service: Placement '
             'http://10.254.253.2/placement: 503 (the next cycle retries)')
RECOVERED = (6, 'INFO virt_capabilities.service: sync recovered after 1 '
                'failed cycle(s)')


def test_a_cycle_ran_during_the_outage_once_it_failed_or_two_finished():
    assert faults.ran_a_cycle_during([FAILED])
    assert faults.ran_a_cycle_during([(6, DONE % 0), (6, DONE % 0)])
    # One finished cycle may have begun before the part went down.
    assert not faults.ran_a_cycle_during([(6, DONE % 0)])


def test_in_sync_again_needs_a_cycle_with_nothing_failed():
    assert not faults.in_sync_again([(6, DONE % 1)])
    assert faults.in_sync_again([(6, DONE % 1), (6, DONE % 0)])


@pytest.mark.parametrize('part', faults.NEEDED_BY_REPORTERS)
def test_a_part_the_cycle_needs_costs_exactly_one_line(part):
    assert faults.judge_lines('r-1', part, [FAILED, RECOVERED]) == 1
    with pytest.raises(GateError, match='logged 0 line'):
        faults.judge_lines('r-1', part, [(6, DONE % 0)])
    with pytest.raises(GateError, match='logged 2 line'):
        faults.judge_lines('r-1', part, [FAILED, FAILED, RECOVERED])


@pytest.mark.parametrize('part', faults.UNUSED_BY_REPORTERS)
def test_a_part_the_reporter_never_talks_to_costs_no_line(part):
    assert faults.judge_lines('r-1', part, [(6, DONE % 0)]) == 0
    with pytest.raises(GateError, match='r-1 logged 1 line.*%s' % part):
        faults.judge_lines('r-1', part, [FAILED, RECOVERED])


def test_keystone_may_cost_a_line_or_not():
    assert faults.judge_lines('r-1', 'keystone', []) == 0
    assert faults.judge_lines('r-1', 'keystone', [FAILED, RECOVERED]) == 1


def test_a_line_without_recovery_fails():
    with pytest.raises(GateError, match='never said it recovered'):
        faults.judge_lines('r-1', 'placement', [FAILED, (6, DONE % 0)])


def test_every_part_has_a_line_policy_and_a_unit():
    names = [name for name, _ in faults.PARTS]
    assert set(faults.NEEDED_BY_REPORTERS + faults.UNUSED_BY_REPORTERS) < \
        set(names)
    assert all(unit.endswith('.service') for _, unit in faults.PARTS)


@pytest.fixture
def fake_journalctl(tmp_path, monkeypatch):
    """A journalctl on PATH that prints the entries of entries.json after
    the cursor it is given (or the last one with -n 1)."""
    entries = tmp_path / 'entries.json'
    script = tmp_path / 'journalctl'
    script.write_text(
        '#!%s\nimport json, sys\n'
        'entries = json.load(open(%r))\n'
        'argv = sys.argv[1:]\n'
        'if "--after-cursor" in argv:\n'
        '    cursor = argv[argv.index("--after-cursor") + 1]\n'
        '    entries = entries[[e["__CURSOR"] for e in entries]'
        '.index(cursor) + 1:]\n'
        'else:\n'
        '    entries = entries[-1:]\n'
        'for e in entries:\n'
        '    print(json.dumps(e))\n' % (sys.executable, str(entries)))
    script.chmod(0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (tmp_path, '/usr/bin:/bin'))

    def write(records):
        entries.write_text(json.dumps([
            dict(__CURSOR='c%d' % i, **record)
            for i, record in enumerate(records)]))
    return write


def test_journal_gives_the_reporters_records_after_the_mark(
        fake_journalctl):
    start = {'PRIORITY': '6', 'SYSLOG_IDENTIFIER': 'systemd',
             'MESSAGE': 'Started devstack@image-type-reporter-1.service'}
    fake_journalctl([start, {'PRIORITY': '6', 'MESSAGE': DONE % 0,
                             'SYSLOG_IDENTIFIER': 'virt-capabilities'}])
    mark, records = node.journal('devstack@image-type-reporter-1')
    assert (mark, records) == ('c1', [])
    fake_journalctl([start, {'PRIORITY': '6', 'MESSAGE': DONE % 0},
                     {'PRIORITY': '3', 'MESSAGE': FAILED[1]},
                     {'PRIORITY': '6', 'SYSLOG_IDENTIFIER': 'systemd',
                      'MESSAGE': 'Stopping devstack@image-type-reporter-1'}])
    mark, records = node.journal('devstack@image-type-reporter-1', 'c1')
    # systemd's own lines about the unit are not the reporter's.
    assert (mark, records) == ('c3', [FAILED])


def test_a_line_written_to_standard_output_has_the_level_it_names(
        fake_journalctl):
    # The reporter logs to its standard output: journald gives every line
    # the unit's priority (6); the line's own level word is the level.
    fake_journalctl([{'PRIORITY': '6', 'MESSAGE': 'start'},
                     {'PRIORITY': '6', 'MESSAGE': FAILED[1]},
                     {'PRIORITY': '6', 'MESSAGE': DONE % 1}])
    records = node.journal('devstack@image-type-reporter-1', 'c0')[1]
    assert records == [FAILED, (6, DONE % 1)]
    assert faults.severe(records) == [FAILED[1]]


def test_a_coloured_line_comes_as_bytes_and_is_read_as_text(
        fake_journalctl):
    # journalctl -o json gives a message with control characters as a
    # list of its bytes; devstack colours its services' lines.
    coloured = '\x1b[01;35m%s\x1b[00m' % FAILED[1]
    fake_journalctl([{'PRIORITY': '6', 'MESSAGE': 'start'},
                     {'PRIORITY': '6',
                      'MESSAGE': list(coloured.encode('utf-8'))}])
    assert node.journal('devstack@placement-api', 'c0')[1] == [FAILED]


class _Node:
    """A stand-in for the container: runs the phase's module here."""

    def __init__(self, module_source, tmp_path):
        self.dir = tmp_path / 'mod'
        self.dir.mkdir()
        (self.dir / 'phase_under_test.py').write_text(module_source)

    def path(self, inside):
        return self.dir / 'root' / inside.lstrip('/')

    def command(self, argv, user=None, env=None):
        assert argv[:2] == [node.PYTHON, '-m']
        assert env['PYTHONPATH'] == node.PHASES_DIR
        return [sys.executable, str(self.dir / (argv[2] + '.py'))]


def test_a_phase_prints_its_lines_and_a_failure_names_it_and_its_log(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(devstack_job, 'LOGS', tmp_path)
    box = _Node('import sys\nprint("noise")\n'
                 'print("[faults] rabbitmq held down 12.0 s")\n'
                 'print("gate_cloud devstack faults: after mariadb: a qcow2 '
                 'boot ended ACTIVE", file=sys.stderr)\nsys.exit(1)\n',
                 tmp_path)
    with pytest.raises(GateError) as exc:
        devstack_job._phase(box, 'faults', 'phase_under_test')
    out = capsys.readouterr().out
    assert '[faults] rabbitmq held down 12.0 s' in out
    assert 'phase faults failed (exit 1)' in str(exc.value)
    assert 'a qcow2 boot ended ACTIVE' in str(exc.value)
    assert str(tmp_path / 'phase-faults.log') in str(exc.value)
    # The phase's code is this checkout's, laid on the node afresh.
    assert (box.path(node.PHASES_DIR) / 'gate_cloud' /
            'devstack_faults.py').read_text() == \
        (devstack_job.REPO / 'gate_cloud' / 'devstack_faults.py').read_text()

