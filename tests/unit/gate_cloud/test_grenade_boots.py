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

"""How the upgrade job judges the boots made while grenade ran."""

import json

from gate_cloud import grenade_boots

WINDOW = [100.0, 200.0]


def boot(fmt='raw', status='ACTIVE', fault='', host='node1', start=50.0,
         end=60.0, host_has_trait=True, any_has_trait=True):
    return {'format': fmt, 'status': status, 'fault': fault, 'host': host,
            'start': start, 'end': end, 'host_has_trait': host_has_trait,
            'any_has_trait': any_has_trait}


REFUSED_QCOW2 = ('No valid host was found. No compute host boots qcow2 '
                 'images (COMPUTE_IMAGE_TYPE_QCOW2); this cloud boots raw.')


def test_placed_and_refused_boots_pass():
    line, failures = grenade_boots.judge([
        boot(),
        boot('qcow2', 'ERROR', REFUSED_QCOW2, host=None,
             host_has_trait=None, any_has_trait=False)], WINDOW)
    assert failures == []
    assert line == 'boots 2, failed 0, refused during a restart 0'


def test_a_boot_on_a_host_without_the_trait_fails_anywhere():
    _, failures = grenade_boots.judge([
        boot('qcow2', host_has_trait=False, start=150, end=160)], WINDOW)
    assert failures and 'lacks its trait' in failures[0]


def test_a_refusal_though_a_host_carries_the_trait_fails_anywhere():
    fault = REFUSED_QCOW2.replace('qcow2', 'raw')
    _, failures = grenade_boots.judge([
        boot('raw', 'ERROR', fault, host=None, host_has_trait=None,
             start=150, end=160)], WINDOW)
    assert failures and 'refused though a host carries' in failures[0]


def test_other_failures_count_apart_only_while_grenade_runs():
    down = boot('raw', 'refused', 'nova-api: connection refused',
                host=None, host_has_trait=None)
    inside = dict(down, start=190.0, end=210.0)
    line, failures = grenade_boots.judge([inside], WINDOW)
    assert failures == []
    assert line.endswith('refused during a restart 1')
    _, failures = grenade_boots.judge([dict(down, start=201.0, end=230.0)],
                                      WINDOW)
    assert failures and 'outside the upgrade' in failures[0]


def test_refusal_by_nova_s_own_prefilter_passes_when_no_host_boots_it():
    """Once the filters are rolled back, Nova's prefilter refuses qcow2
    with its bare fault: right, since no host carries the trait."""
    bare = 'No valid host was found. '
    line, failures = grenade_boots.judge([
        boot('qcow2', 'ERROR', bare, host=None, host_has_trait=None,
             any_has_trait=False)], WINDOW)
    assert failures == [] and line.endswith('restart 0')
    # Placement not answering when it ended: not known to be right.
    _, failures = grenade_boots.judge([
        boot('qcow2', 'ERROR', bare, host=None, host_has_trait=None,
             any_has_trait=None, start=300, end=310)], WINDOW)
    assert failures


def test_no_boot_is_a_failure():
    assert grenade_boots.judge([], WINDOW)[1] == ['no boot ran']


def test_records_are_the_json_lines_of_the_stream():
    lines = ['[boots] starting', json.dumps(boot()), 'Traceback ...']
    assert grenade_boots.records(lines) == [boot()]


def test_a_phase_line_takes_the_last_traits_lost_count(tmp_path):
    from gate_cloud import GateError
    from gate_cloud import grenade_job
    log = tmp_path / 'phase.log'
    log.write_text('image-type-filter resources pre-upgrade: traits lost: 0\n'
                   '[removal] 1 reporter(s) stopped and removed: 1 recorded '
                   'trait(s) gone, traits lost 2\n')
    assert grenade_job.traits_lost(log) == 2
    log.write_text('nothing counted\n')
    try:
        grenade_job.traits_lost(log)
    except GateError as exc:
        assert 'no "traits lost" count' in str(exc)
    else:
        raise AssertionError('a log without the count read as a number')


def test_the_stream_runs_on_the_node_as_the_phases_do(tmp_path):
    """Started from the gate's side, the stream is this checkout's
    gate_cloud laid on the node and run by the node's python, as a phase
    is; its stop file ends it, and its records are read back."""
    import sys

    from gate_cloud import devstack_node as node

    ran = []

    class Box:
        def path(self, inside):
            return tmp_path / 'root' / str(inside).lstrip('/')

        def command(self, argv, user=None, env=None):
            ran.append((argv, env))
            # The node's side, stood in for: ready, one boot, then ends
            # when the stop file appears.
            stop = self.path(grenade_boots.STOP_FILE)
            return [sys.executable, '-c', (
                'import json, os, time\n'
                'print(%r, flush=True)\n'
                'print(json.dumps({"format": "raw"}), flush=True)\n'
                'while not os.path.exists(%r): time.sleep(0.05)\n'
                % (grenade_boots.READY, str(stop)))]

    (tmp_path / 'root').mkdir()
    stream = grenade_boots.Stream(Box(), tmp_path / 'boots.log')
    stream.start()
    assert stream.stop() == [{'format': 'raw'}]
    argv, env = ran[0]
    assert argv == [node.PYTHON, '-m', 'gate_cloud.grenade_boots']
    assert env['PYTHONPATH'] == node.PHASES_DIR
    assert (Box().path(node.PHASES_DIR) / 'gate_cloud' /
            'grenade_boots.py').exists()
