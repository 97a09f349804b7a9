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

"""``python3 -m benchmarks.fleet run``: the steps, in order, on the host.

Prepare (the gate's host tools, base root and sdists), lay out the fleet's
root, boot its container, render local.conf, stack.sh, then on the node:
every node in Placement, the workload's flavor and images, the reporters
at fleet size, and each scheduling mode (``modes.MODES``) in turn. The
container is stopped at the end, pass or fail (``--keep`` leaves it), and
each step prints one line with the time since the start; a failure names
its step and its log.
"""

import json
import os
import pathlib
import platform
import subprocess
import sys
import time

from benchmarks.fleet import figures
from benchmarks.fleet import gate
from benchmarks.fleet import localconf
from benchmarks.fleet import modes

SIZES = {
    # The full run: a thousand nodes, 300 boots per mode.
    'full': {'nodes': 1000, 'boots': 300, 'concurrency': 8,
             'interval': 60, 'window': 120},
    # CI's: tens of nodes, tens of boots, so the command cannot rot.
    'small': {'nodes': 40, 'boots': 20, 'concurrency': 4,
              'interval': 10, 'window': 25},
}
DEFAULT_JSON = gate.REPO / 'benchmarks' / 'results' / 'fleet-latest.json'
#: Per step on the node: the fleet's start-up, the reporters, one mode.
STEP_TIMEOUT = 7200


def _step(name, started):
    print('== fleet: %s (%.0f s)' % (name, time.monotonic() - started),
          flush=True)


def machine():
    """What the figures were measured on."""
    cpu = ''
    for line in pathlib.Path('/proc/cpuinfo').read_text().splitlines():
        if line.startswith('model name'):
            cpu = line.split(':', 1)[1].strip()
            break
    mem_kib = int(pathlib.Path('/proc/meminfo').read_text().split()[1])
    return {'cores': os.cpu_count(), 'cpu': cpu,
            'memory_gib': round(mem_kib / 1024 / 1024, 1),
            'kernel': platform.release(),
            'load_average': os.getloadavg()}


def _commit():
    result = subprocess.run(['git', '-C', str(gate.REPO), 'rev-parse',
                             'HEAD'], capture_output=True, text=True,
                            timeout=30)
    return result.stdout.strip()


def run(size='full', keep=False, json_path=DEFAULT_JSON, **override):
    params = dict(SIZES[size])
    params.update({k: v for k, v in override.items() if v})
    started = time.monotonic()
    box = gate.box()
    if box.running():
        raise gate.FleetError('a fleet container is running (%s): python3 '
                              '-m benchmarks.fleet down' % box.state.path)
    begun = {'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
             'machine_at_start': machine()}
    gate.prepare()
    _step('prepared (the gate\'s host tools, base root, sdists)', started)
    gate.lay_out_root(localconf.DRIVER_MODULE)
    _step('root laid out (sources, this checkout, the fleet\'s devstack '
          'plugin)', started)
    nodes = params['nodes']
    try:
        gate.boot(box)
        gate.render(box, nodes)
        _step('container booted, local.conf rendered', started)
        gate.stack(box, started, _step)
        fleet = gate.on_node(box, 'fleet', ['fleet', str(nodes)],
                             STEP_TIMEOUT)
        _step('%d nodes in Placement' % nodes, started)
        setup = gate.on_node(box, 'setup', ['setup'], 600)
        reporters = gate.on_node(
            box, 'reporters', ['reporters', str(nodes),
                               str(params['interval']),
                               str(params['window'])], STEP_TIMEOUT)
        _step('reporters measured', started)
        by_mode = {}
        for mode in modes.MODES:
            by_mode[mode.name] = gate.on_node(
                box, 'mode-' + mode.name,
                ['mode', mode.name, str(nodes), str(params['boots']),
                 str(params['concurrency']), json.dumps(setup)],
                STEP_TIMEOUT)
            _step('mode %s booted' % mode.name, started)
    finally:
        if not keep:
            gate.stop(box)
            _step('container stopped, its network rules removed', started)
    document = dict(begun, size=size, commit=_commit(), **params)
    document.update({
        'machine_at_end': machine(),
        'fleet': fleet,
        'reporters': reporters,
        'modes': by_mode,
        'ratios': figures.ratios(by_mode),
        'seconds': round(time.monotonic() - started),
    })
    figures.write(pathlib.Path(json_path), document)
    for line in figures.table(by_mode):
        print(line)
    ratio = document['ratios']
    print('project / nova at p99 of the scheduler\'s time per request: '
          '%s (goal <= %.2f)' % (ratio.get('project_over_nova_p99'),
                                 figures.GOAL))
    print('== fleet: done in %d s; figures in %s'
          % (document['seconds'], json_path))
    wrong = figures.ours_wrong(by_mode)
    if wrong:
        said = '; '.join(
            '%s: %s' % (name, ', '.join('%s %d' % item
                                        for item in problems.items()))
            for name, problems in wrong.items())
        print('benchmarks.fleet run: this project\'s modes left servers in '
              'ERROR or where they cannot run (%s); figures in %s'
              % (said, json_path), file=sys.stderr)
        return 1
    return 0


def down():
    gate.stop(gate.box())
