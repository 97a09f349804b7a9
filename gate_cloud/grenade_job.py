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

"""The upgrade job on grenade: 2026.1 to 2026.2 with boots running.

``python3 -m gate_cloud grenade run`` does what Zuul does for
``image-type-filter-grenade`` on one node, in the gate's systemd container
(doc/source/contributor/gate.rst says what each step proves): both sides
where grenade's pre-run puts them (``BASES``), local.confs and grenade's
localrc rendered from the job (``localconf.render_grenade``), the base's
``stack.sh``; this project's ``resources.sh`` phases around grenade's two
parts (``grenade.sh -b`` and ``-t``) with a stream of boots beside them
(``grenade_boots.py``), judged as ``[upgrade]``; the job's tempest with the
filters on; the rollback and the reporters' removal (``AFTER``), each
with boots beside it; the container stopped, pass or fail.
"""

import functools
import json
import pathlib
import re
import shutil
import subprocess
import threading
import time

from gate_cloud import GateError
from gate_cloud import container
from gate_cloud import devstack_job as gate
from gate_cloud import grenade_boots
from gate_cloud import sources

SERIES = ('2026.2', '2026.1')
#: The job's one node, on the upgrade job's own network.
MACHINE = container.MACHINE + '-up'
ROOT = gate.ROOTS / MACHINE
BASES = {'old': '/opt/stack/old', 'new': '/opt/stack/new'}
GRENADE_DIR = BASES['new'] + '/grenade'
GRENADE_TIMEOUT = 5400
_step = functools.partial(gate._step, job='grenade')
#: grenade's resource database, where resources.sh keeps its records:
#: grenaderc's GRENADE_DB in its SAVE_DIR (STACK_ROOT/save, which it sets
#: after reading localrc).
GRENADE_DB = '/opt/stack/save/grenade_db.ini'
#: This project's resources.sh, as grenade's PLUGIN_DIR finds it.
RESOURCES = BASES['new'] + '/image-type-filter/devstack/upgrade/resources.sh'
#: Trees the project's own tree does not bring, cloned on both sides as
#: Zuul's required-projects are (devstack's plugins among them).
PLACED = ('neutron',)
#: After the upgrade and tempest: the filters rolled back, then the
#: reporters removed, each with boots running beside it.
AFTER = (('rollback', 'gate_cloud.devstack_rollback'),
         ('removal', 'gate_cloud.devstack_removal'))
#: grenade's closing lines, printed as they are.
CLOSING = ('grenade.sh completed in', 'Grenade has completed')


def prepare(log=None):
    gate.prepare(log)
    for series in SERIES:
        sources.download_sdists(series, gate.STATE / 'sdists',
                                log or gate.LOGS / 'prepare.log')


def _clone(repository, branch, dest):
    subprocess.run(['git', '-c', 'safe.directory=*', 'clone', '-q', '-b',
                    branch, 'file://%s' % repository, str(dest)],
                   check=True, capture_output=True, timeout=600)


def _lay_out_root():
    gate.copy_root(ROOT)
    git_base = ROOT / gate.GIT_BASE.lstrip('/')
    for series in SERIES:
        for name, old, new in sources.make_git_base(
                series, git_base, gate.STATE / 'sdists',
                gate.LOGS / 'prepare.log'):
            print('upper-constraints (%s): %s %s raised to %s (a release '
                  'needs it)' % (series, name, old, new))
    trees = ROOT / gate.TREES.lstrip('/')
    spec = {s: sources.SERIES[s]['snapshots'] for s in SERIES}
    sources.unpack(sources.snapshot(spec['2026.2']['devstack']), trees)
    sources.unpack(sources.download_sdists(
        '2026.2', gate.STATE / 'sdists', gate.LOGS / 'prepare.log')[
            'tempest'], trees)
    for side, series in (('old', '2026.1'), ('new', '2026.2')):
        base = ROOT / BASES[side].lstrip('/')
        sources.snapshot_tree(spec[series]['devstack'], base / 'devstack')
        gate._project_tree(base / 'image-type-filter')
        for name in PLACED:
            _clone(git_base / 'openstack' / (name + '.git'),
                   sources.SERIES[series]['devstack_branch'], base / name)
    sources.snapshot_tree('grenade-', ROOT / GRENADE_DIR.lstrip('/'))
    (ROOT / GRENADE_DB.lstrip('/')).parent.mkdir(parents=True,
                                                 exist_ok=True)
    gate.write_image_and_local_sh(ROOT, BASES['old'] + '/devstack')


def _render(box):
    trees = box.path(gate.TREES)
    tempest = [p.name for p in trees.iterdir()
               if p.name.startswith('tempest-')][0]
    devstack = [p.name for p in trees.iterdir()
                if p.name.startswith('devstack')][0]
    result = box.run(
        ['python3', '-m', 'gate_cloud.localconf', '--grenade', GRENADE_DIR,
         '%s/%s' % (gate.TREES, devstack), '%s/%s' % (gate.TREES, tempest),
         '-', box.address, 'file://' + gate.IMAGE, gate.GIT_BASE],
        env={'PYTHONPATH': BASES['new'] + '/image-type-filter'},
        timeout=120)
    for side in ('old', 'new'):
        shutil.copy(box.path(BASES[side] + '/devstack/local.conf'),
                    gate.LOGS / ('local.conf.%s' % side))
    shutil.copy(box.path(GRENADE_DIR + '/localrc'),
                gate.LOGS / 'grenade-localrc')
    return json.loads(result.stdout)


def _as_stack(box, name, command, env=None, timeout=GRENADE_TIMEOUT):
    """``command`` (bash) as the stack user, its output in
    ``.gate/logs/NAME.log``; a failure raises with its last lines."""
    def show(line):
        if not line.startswith('+') and (
                any(mark in line for mark in CLOSING)
                or 'image-type-filter resources' in line):
            return line.split('| ', 1)[-1]
    return gate.logged_run(
        box.command(['bash', '-c', command], user='stack', env=env),
        gate.LOGS / ('%s.log' % name), name, show, tail=30, timeout=timeout)


def _resources(box, phase, side=''):
    """This project's resources.sh, called as grenade's ``resources``
    function calls a plugin's (TOP_DIR: the base devstack)."""
    _as_stack(box, 'resources-%s%s' % (phase, '-' + side if side else ''),
              'cd %s && %s %s %s' % (GRENADE_DIR, RESOURCES, phase, side),
              env={'GRENADE_DIR': GRENADE_DIR,
                   'TOP_DIR': BASES['old'] + '/devstack'}, timeout=1800)


def _grenade(box, part):
    return _as_stack(box, 'grenade-%s' % part.lstrip('-'),
                     'cd %s && ./grenade.sh %s' % (GRENADE_DIR, part),
                     env={'GRENADE_USE_EXTERNAL_DEVSTACK': 'True'})


#: grenade's nova step waits for a unit named devstack@n-cpu (or a
#: process named n-cpu); the fake driver's one nova-compute is
#: devstack@n-cpu-1. This unit has the name and follows that one's state:
#: started with it (WantedBy), stopped with it (BindsTo).
N_CPU_UNIT = """[Unit]
Description=grenade's n-cpu: the fake driver's nova-compute, devstack@n-cpu-1
BindsTo=devstack@n-cpu-1.service
After=devstack@n-cpu-1.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true

[Install]
WantedBy=devstack@n-cpu-1.service
"""


#: Where devstack keeps each fake node's state (NOVA_STATE_PATH/<host>).
NOVA_STATE = '/opt/stack/data/nova'


class KeepComputeIds(threading.Thread):
    """Each fake node keeps its compute_id through grenade's nova step.

    devstack's fake driver writes a new uuid to each node's compute_id
    file whenever it starts that nova-compute (lib/nova
    start_nova_compute), and grenade's nova step starts it from the target
    devstack: Nova then refuses the node ("Duplicate compute node record
    found"), for its record has the old uuid. An operator's upgrade keeps
    the file; so does the gate: the node's own id is written back as soon
    as devstack replaces it, and its nova-compute restarted.
    """

    def __init__(self, box):
        super().__init__(daemon=True)
        self.box = box
        self.stopping = threading.Event()
        self.kept = {path: path.read_text()
                     for path in box.path(NOVA_STATE).glob('*/compute_id')}
        self.restored = 0
        if not self.kept:
            raise GateError('no fake node compute_id in %s' % NOVA_STATE)

    def unit(self, path):
        """devstack@n-cpu-N of the node ${HOSTNAME}N."""
        return 'devstack@n-cpu-%s.service' % path.parent.name[
            len(MACHINE):]

    def run(self):
        while not self.stopping.wait(1):
            for path, text in self.kept.items():
                if path.exists() and path.read_text() != text:
                    path.write_text(text)
                    self.box.run(['systemctl', 'restart', self.unit(path)])
                    self.restored += 1

    def stop(self):
        self.stopping.set()
        self.join(timeout=60)


def traits_lost(log):
    """The "traits lost" count a resources.sh verify or a phase printed
    last in ``log``; none printed is an error, never a zero."""
    found = re.findall(r'traits lost:? (\d+)', pathlib.Path(log).read_text(
        errors='replace'))
    if not found:
        raise GateError('no "traits lost" count in %s' % log)
    return int(found[-1])


def _judged(name, boots, window, log):
    """The phase's line: its boots, and the traits lost that ``log``
    counts; a failure the filters caused raises."""
    line, failures = grenade_boots.judge(boots, window)
    print('[%s] %s, traits lost %d' % (name, line, traits_lost(log)),
          flush=True)
    if failures:
        raise GateError('boots through the %s: %s; the log: %s' % (
            name, '; '.join(failures[:5]),
            gate.LOGS / ('boots-%s.log' % name)))


def _streamed_phase(box, name, module):
    """A phase on the upgraded side with a stream of boots beside it."""
    stream = grenade_boots.Stream(box, gate.LOGS / ('boots-%s.log' % name))
    stream.start()
    window = [time.time()]
    try:
        gate._phase(box, name, module, dest=BASES['new'])
    finally:
        boots = stream.stop()
    window.append(time.time())
    _judged(name, boots, window, gate.LOGS / ('phase-%s.log' % name))


def run(keep=False):
    started = time.monotonic()
    box = gate.UPGRADE_NETWORK.container(
        MACHINE, gate.UPGRADE_NETWORK.subnet.rsplit('.', 1)[0] + '.2',
        gate.NODES)
    if box.running():
        raise GateError('the upgrade job\'s container is running (%s): '
                        'python3 -m gate_cloud devstack down'
                        % box.state.path)
    prepare()
    _step('prepared (host tools, base root, both series\' sdists)', started)
    _lay_out_root()
    _step('roots laid out (old and new sides, grenade)', started)
    with gate.running([box], gate.UPGRADE_NETWORK, keep, started):
        gate.UPGRADE_NETWORK.up()
        box.start(ROOT, gate.LOGS / ('container-%s.log' % MACHINE))
        variables = _render(box)
        _step('container booted, both local.confs and grenade\'s '
              'localrc rendered from the job', started)
        # devstack stable/2026.1 writes KSM's switch whenever the file
        # exists, and the container's /sys is read-only (master warns
        # and goes on): the container shares this machine's kernel, which
        # the gate does not retune, so the switch is hidden.
        box.run(['mount', '-t', 'tmpfs', '-o', 'size=1M', 'ksm-hidden',
                 '/sys/kernel/mm/ksm'])
        gate._stack(box, started, BASES['old'], node=MACHINE, step=_step)
        box.path('/etc/systemd/system/devstack@n-cpu.service').write_text(
            N_CPU_UNIT)
        box.run(['systemctl', 'daemon-reload'])
        box.run(['systemctl', 'enable', '--now', 'devstack@n-cpu.service'])
        _resources(box, 'create')
        _resources(box, 'verify', 'pre-upgrade')
        _step('resources created and verified on the base', started)
        stream = grenade_boots.Stream(box, gate.LOGS / 'boots-upgrade.log')
        stream.start()
        try:
            window = [time.time()]
            kept = box.path(GRENADE_DB).read_bytes()
            _grenade(box, '-b')
            # grenade.sh -b empties its resource database first
            # (init_grenade_db), before the create it would run: the
            # records of the gate's create, run before it, go back.
            box.path(GRENADE_DB).write_bytes(kept)
            _step('grenade base part passed (state saved, services '
                  'down)', started)
            _resources(box, 'verify_noapi')
            keeper = KeepComputeIds(box)
            keeper.start()
            try:
                _grenade(box, '-t')
            finally:
                keeper.stop()
            print('[upgrade] devstack gave a fake node a new compute_id %d '
                  'time(s); its own was kept' % keeper.restored, flush=True)
            window.append(time.time())
            _step('grenade target part passed (every project '
                  'upgraded)', started)
            _resources(box, 'verify', 'post-upgrade')
        finally:
            boots = stream.stop()
        _judged('upgrade', boots, window,
                gate.LOGS / 'resources-verify-post-upgrade.log')
        _step('resources verified after the upgrade', started)
        gate.tempest_on(box, variables, started, BASES['new'], _step,
                        'upgraded, filters on')
        for name, module in AFTER:
            _streamed_phase(box, name, module)
            _step('phase %s passed' % name, started)
        _resources(box, 'destroy')
        _step('resources destroyed', started)
    return 0
