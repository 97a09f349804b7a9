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

"""The devstack gate job: upstream devstack, this project's plugin, tempest.

``python3 -m gate_cloud devstack run`` does what Zuul does for
``image-type-filter-devstack-multinode``, each node of the job's nodeset a
systemd container on the gate's own network (``container.py``): Debian 12
roots with devstack from ``../shared/upstream/`` and the services from
their sdists (``sources.py``), each node's local.conf rendered from the
job (``localconf.py``), ``stack.sh`` on the controller then on each
subnode and devstack's ``discover_hosts.sh`` (Zuul's orchestrate-devstack
order), tempest on the controller with the filters on and off
(``prove``), the gate's phases there (``PHASES``), and the containers and
network gone, pass or fail. doc/source/contributor/gate.rst says what each
step proves. It prints each node's devstack closing lines, tempest's
summaries, one line per step with its time, and on failure the lines that
say why, naming the node, with the log's path (``.gate/logs/``).
"""

import contextlib
import json
import pathlib
import re
import shutil
import subprocess
import time

from gate_cloud import GateError
from gate_cloud import container
from gate_cloud import devstack_node as node
from gate_cloud import sources

REPO = pathlib.Path(__file__).resolve().parent.parent
STATE = REPO / '.gate'
SERIES = '2026.2'
BASE_ROOTFS = STATE / 'base-rootfs'
#: Each node's root, by machine name.
ROOTS = STATE / 'roots'
#: The containers' state files (container.py).
NODES = STATE / 'nodes'
LOGS = STATE / 'logs'
#: The gate's network, and the upgrade job's (its own, so that both jobs
#: can run at once): bridge, /24, chains.
NETWORK = container.Network('itfgate0', '10.254.253.0/24', 'ITF-GATE',
                            STATE / 'networks')
UPGRADE_NETWORK = container.Network('itfgate1', '10.254.250.0/24',
                                    'ITF-GATE-UP', STATE / 'networks')
PROJECT_DIR = '/opt/stack/image-type-filter'
GIT_BASE = '/opt/git'
IMAGE = '/opt/stack/images/gate-image.raw'
#: Upstream trees the gate reads in the container (devstack's and
#: tempest's job definitions): a path of the container's own root.
TREES = '/opt/gate-trees'
#: devstack's DEST (grenade's upgraded side: /opt/stack/new).
DEST = '/opt/stack'
STACK_TIMEOUT = 3600
TEMPEST_TIMEOUT = 3600
PHASE_TIMEOUT = 3600
#: The trait of tempest's image's format (raw: the fake driver's).
TEMPEST_TRAIT = 'COMPUTE_IMAGE_TYPE_RAW'
#: The phases run on the node, in order: (name, module run as root).
PHASES = (('candidates', 'gate_cloud.devstack_candidates'),
          ('log-only', 'gate_cloud.devstack_log_only'),
          ('privilege', 'gate_cloud.devstack_privilege'),
          ('faults', 'gate_cloud.devstack_faults'),
          ('figures', 'gate_cloud.devstack_figures'))
#: devstack's own closing lines, printed as they are.
CLOSING = re.compile(r'(DevStack Version|DevStack Component Timing|'
                     r'Change: |OS Version|stack\.sh completed in|'
                     r'Total runtime)')
FAILED_TEST = re.compile(r'\{\d+\} (\S+) \[[\d.]+s\] \.\.\. FAILED')
PASSED_TEST = re.compile(r'\{\d+\} (\S+) \[[\d.]+s\] \.\.\. ok$')
COUNT = re.compile(r'^ - (Passed|Skipped|Failed): (\d+)')

#: Run after stack.sh's extra phase (devstack runs ``local.sh`` last):
#: what the userspace datapath and the fake driver's host name need.
LOCAL_SH = """#!/bin/bash
# Written by the image-type-filter gate (gate_cloud/devstack_job.py).
set -o errexit -o xtrace
source {devstack}/openrc admin admin
# devstack sets OVS's userspace datapath on br-ex only; br-int must use
# it too, or no port of a server is ever plugged.
sudo ovs-vsctl set Open_vSwitch . external-ids:ovn-bridge-datapath-type=netdev
sudo ovs-vsctl set Bridge br-int datapath_type=netdev
# ML2/OVN binds a port only to a chassis named as the port's host: the
# first fake node, ${{HOSTNAME}}1, the one tempest's own servers go to.
sudo ovs-vsctl set Open_vSwitch . external-ids:hostname=$(hostname)1
"""

#: The project's tempest plugin (contrib/tempest): the job's
#: ``tempest_test_regex`` picks it and tempest's own compute tests (why
#: those: ``.zuul.yaml``); the run without the filters leaves it out.
PLUGIN_REGEX = r'^image_type_tempest_plugin\.'

#: Tempest workers. The tests mostly wait on the cloud (polling a server's
#: status every second), so more workers than the machine's two cores
#: shorten a suite; tempest hands out whole test classes, and the plugin
#: has five.
CONCURRENCY = 4


def _step(name, started, job='devstack'):
    print('== %s gate: %s (%.0f s)' % (job, name, time.monotonic() -
                                      started), flush=True)


def _project_tree(dest):
    """This checkout (committed and uncommitted files, no ignored ones)
    as a one-commit git repository, as Zuul prepares the change."""
    listed = subprocess.run(
        ['git', '-C', str(REPO), 'ls-files', '-z', '--cached', '--others',
         '--exclude-standard'], capture_output=True, check=True,
        timeout=60).stdout.split(b'\0')
    dest = pathlib.Path(dest)
    shutil.rmtree(dest, ignore_errors=True)
    for name in filter(None, listed):
        source = REPO / name.decode()
        if source.is_file():
            target = dest / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    identity = ['-c', 'user.name=gate', '-c', 'user.email=gate@localhost']
    for argv in (['init', '-q', '-b', 'master'], ['add', '-A', '.'],
                 ['commit', '-q', '-m', 'the change under test']):
        subprocess.run(['git'] + identity + ['-C', str(dest)] + argv,
                       check=True, capture_output=True, timeout=120)


def prepare(log=None):
    """What needs no container: host tools, the base root, the sdists."""
    LOGS.mkdir(parents=True, exist_ok=True)
    log = log or LOGS / 'prepare.log'
    container.ensure_host_tools()
    if not BASE_ROOTFS.exists():
        container.build_rootfs(BASE_ROOTFS, log)
    sources.download_sdists(SERIES, STATE / 'sdists', log)


def machine(node):
    """The container of a nodeset's node: the controller is ``itfgate``
    (its fake hosts ``itfgate1``...), a subnode ``itfgate-NODE``."""
    return container.MACHINE + ('' if node == 'controller' else '-' + node)


def copy_root(root):
    """A fresh root from the base."""
    if root.exists():
        subprocess.run(['rm', '-rf', '--one-file-system', str(root)],
                       check=True, timeout=600)
    root.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(['cp', '-a', '--reflink=auto', str(BASE_ROOTFS),
                    str(root)], check=True, timeout=1200)


def _lay_out_root(root):
    """The controller's root, with every tree devstack needs."""
    copy_root(root)
    raised = sources.make_git_base(SERIES, root / GIT_BASE.lstrip('/'),
                                   STATE / 'sdists', LOGS / 'prepare.log')
    for name, old, new in raised:
        print('upper-constraints: %s %s raised to %s (a release needs it)'
              % (name, old, new))
    stack = root / 'opt/stack'
    stack.mkdir(parents=True, exist_ok=True)
    trees = root / TREES.lstrip('/')
    sources.snapshot_tree(sources.SERIES[SERIES]['snapshots']['devstack'],
                          stack / 'devstack')
    # tempest's job definitions (devstack-tempest), for local.conf.
    sources.unpack(sources.download_sdists(
        SERIES, STATE / 'sdists', LOGS / 'prepare.log')['tempest'], trees)
    _project_tree(stack / 'image-type-filter')
    write_image_and_local_sh(root, '/opt/stack/devstack')


def write_image_and_local_sh(root, devstack):
    """The image devstack uploads (``IMAGE``) and ``LOCAL_SH`` in the
    devstack tree ``devstack`` of ``root``."""
    image = root / IMAGE.lstrip('/')
    image.parent.mkdir(parents=True, exist_ok=True)
    with open(image, 'wb') as out:
        out.truncate(16 * 1024 * 1024)
    local_sh = root / devstack.lstrip('/') / 'local.sh'
    local_sh.write_text(LOCAL_SH.format(devstack=devstack))
    local_sh.chmod(0o755)


def _lay_out_subnode(root, controller):
    """A subnode's root: the base with the controller's GIT_BASE, devstack
    tree (its local.sh) and this checkout, as Zuul gives every node."""
    copy_root(root)
    for tree in (GIT_BASE, '/opt/stack/devstack', PROJECT_DIR):
        (root / tree.lstrip('/')).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(['cp', '-a', '--reflink=auto',
                        str(controller / tree.lstrip('/')),
                        str(root / tree.lstrip('/'))], check=True,
                       timeout=600)


def _render(root):
    """Each node's local.conf from the job, by the controller root's
    python3 (chroot: before any node boots, for the nodeset names them);
    return the nodes and their variables."""
    tempest = [p.name for p in (root / TREES.lstrip('/')).iterdir()
               if p.name.startswith('tempest-')]
    out = '/opt/stack/gate-local-conf'
    (root / out.lstrip('/')).mkdir(parents=True, exist_ok=True)
    result = container.run_in_root(root, [
        'python3', '-m', 'gate_cloud.localconf', '/opt/stack/devstack',
        '%s/%s' % (TREES, tempest[0]), out, NETWORK.subnet,
        'file://' + IMAGE, GIT_BASE], {'PYTHONPATH': PROJECT_DIR})
    rendered = json.loads(result.stdout)
    for name, _, _ in rendered['nodes']:
        shutil.copy(root / out.lstrip('/') / ('local.conf.' + name),
                    LOGS / ('local.conf.' + name))
    return rendered


def _stack(box, started, dest=DEST, node='controller', step=_step):
    """stack.sh in ``dest``'s devstack as the stack user; devstack's
    closing lines printed, naming the node."""
    box.run([dest + '/devstack/tools/create-stack-user.sh'], timeout=300)
    # GIT_BASE's repositories too: git refuses to read another user's.
    box.run(['chown', '-R', 'stack:stack', '/opt/stack', GIT_BASE],
            timeout=300)
    log = LOGS / ('stack-%s.log' % node)
    with open(log, 'wb') as out:
        rc = subprocess.run(
            box.command(['bash', '-c', 'cd %s/devstack && ./stack.sh'
                         % dest], user='stack'),
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            timeout=STACK_TIMEOUT).returncode
    lines = log.read_text(errors='replace').splitlines()
    # devstack writes its progress lines ("stack.sh completed in N
    # seconds" among them) to the summary log beside $LOGFILE, the rest to
    # its standard output.
    summaries = sorted(
        (p for p in box.path(dest + '/logs').glob('*.summary*')
         if not p.is_symlink()), key=lambda p: p.stat().st_mtime)
    summary = (summaries[-1].read_text(errors='replace').splitlines()
               if summaries else [])
    for line in lines + summary:
        if CLOSING.search(line):
            print('[%s] %s' % (node, line.split('| ', 1)[-1]))
    if rc != 0:
        print('\n'.join(_why(lines)))
        raise GateError('stack.sh failed (exit %d) on %s (%s) in %s; its '
                        'log: %s' % (rc, node, box.machine,
                                     _last_phase(lines), log))
    step('stack.sh passed on %s (%s)' % (node, box.machine), started)


def _discover_hosts(box, subnodes, started):
    """devstack's discover_hosts.sh on the controller, as Zuul's
    orchestrate-devstack runs it after the subnodes; each subnode's
    nova-computes must be among the hosts it maps."""
    out = box.run(['bash', '-c', 'cd /opt/stack/devstack && '
                   './tools/discover_hosts.sh'], user='stack',
                  env={'PATH': node.VENV_BIN + ':' + container.PATH}).stdout
    (LOGS / 'discover_hosts.log').write_text(out)
    for name, box_name in subnodes:
        if "'%s" % box_name not in out:
            raise GateError('discover_hosts.sh mapped no host of %s (%s); '
                            'its output: %s' % (name, box_name,
                                                LOGS / 'discover_hosts.log'))
    _step('discover_hosts.sh mapped the subnodes\' hosts', started)


def _last_phase(lines):
    """The step stack.sh was in: its last ``echo_summary`` (devstack's
    own progress line), and the call it died in."""
    summary = 'its first steps'
    for line in lines:
        match = re.search(r"echo_summary '?([^']+)'?$", line)
        if match:
            summary = match.group(1).strip()
    calls = [line.strip() for line in lines
             if re.match(r'^\S*stack\.sh:\d+:\w+$', line.strip())]
    return '"%s"%s' % (summary, ' at %s' % calls[-1] if calls else '')


def _why(lines):
    """The lines of a failed stack.sh that say why: its errors and its
    last lines."""
    errors = [line for line in lines if re.search(
        r'\[ERROR\]|ERROR: |Error: |die |Traceback', line)]
    return ['-- stack.sh: the errors it logged --'] + errors[-12:] + [
        '-- stack.sh: its last lines --'] + lines[-25:]


def _tempest(box, variables, name, exclude=None, dest=DEST):
    """Run tempest as the job's run-tempest role does (its env and
    ``tempest_test_regex``, less what ``exclude`` matches); return its
    counts. The constraints are the side's requirements tree's
    (``localconf.machine``)."""
    constraints = dest + '/requirements/upper-constraints.txt'
    env = {'PATH': node.VENV_BIN + ':' + container.PATH,
           'TOX_CONSTRAINTS_FILE': constraints,
           'UPPER_CONSTRAINTS_FILE': constraints}
    log = LOGS / ('tempest-%s.log' % re.sub(r'\W+', '-', name))
    argv = ['bash', '-c', 'cd %s/tempest && tox -e %s -- "$@"' % (
        dest, variables.get('tox_envlist', 'all')), 'tempest',
        variables['tempest_test_regex'], '--concurrency=%d' % CONCURRENCY]
    if exclude:
        argv += ['--exclude-regex', exclude]
    with open(log, 'wb') as out:
        rc = subprocess.run(box.command(argv, user='stack', env=env),
                            stdin=subprocess.DEVNULL, stdout=out,
                            stderr=subprocess.STDOUT,
                            timeout=TEMPEST_TIMEOUT).returncode
    lines = log.read_text(errors='replace').splitlines()
    print('-- tempest (%s) --' % name)
    # stestr's summary: from its "Totals" heading to the execute time.
    start = max((i for i, line in enumerate(lines) if line == 'Totals'),
                default=len(lines))
    for line in lines[max(start - 1, 0):]:
        print(line)
        if line.startswith('Sum of execute time'):
            break
    counts = judge_tempest(name, lines, rc, log)
    counts['passed tests'] = {m.group(1) for m in map(PASSED_TEST.search,
                                                       lines) if m}
    return counts


def same_peer_tests(on, off):
    """With the filters off, exactly the compute tests that passed with
    them on must pass: the filters change where servers go, not whether
    Nova's API works."""
    plugin = re.compile(PLUGIN_REGEX)
    passed_on = {t for t in on['passed tests'] if not plugin.search(t)}
    lost = sorted(passed_on - off['passed tests'])
    gained = sorted(off['passed tests'] - passed_on)
    if lost or gained:
        raise GateError('tempest compute tests with the filters off differ '
                        'from the filters on: %s' % '; '.join(
                            ['only on: %s' % ', '.join(lost[:5])] * bool(lost)
                            + ['only off: %s' % ', '.join(gained[:5])]
                            * bool(gained)))


def judge_tempest(name, lines, rc, log):
    """tempest's counts from its output; a failed test, a failed run or
    a run of no test raises, naming the tests and the log."""
    failed = [m.group(1) for m in map(FAILED_TEST.search, lines) if m]
    counts = {m.group(1): int(m.group(2)) for m in map(COUNT.match, lines)
              if m}
    if rc != 0 or failed or counts.get('Failed'):
        raise GateError('tempest (%s) failed: %s; its log: %s' % (
            name, ', '.join(failed[:5]) or 'exit %d' % rc, log))
    if not counts.get('Passed'):
        raise GateError('tempest (%s) ran no test; its log: %s'
                        % (name, log))
    return counts


def _filters(box, on, dest=DEST):
    """Turn the request filter's switch on or off in nova-scheduler's
    nova.conf and restart it through its devstack unit."""
    box.run(['bash', '-c', 'source %s/devstack/inc/ini-config && '
             'iniset /etc/nova/nova.conf scheduler '
             'filter_hosts_by_image_type_support %s' % (dest, on)],
            user='stack')
    box.run(['systemctl', 'restart', 'devstack@n-sch.service'],
            timeout=300)


def node_code(box, dest):
    """This checkout's gate_cloud copied afresh onto the node; the
    environment that runs it there."""
    code = box.path(node.PHASES_DIR) / 'gate_cloud'
    shutil.rmtree(code, ignore_errors=True)
    shutil.copytree(REPO / 'gate_cloud', code,
                    ignore=shutil.ignore_patterns('__pycache__'))
    return {'PYTHONPATH': node.PHASES_DIR, 'PYTHONUNBUFFERED': '1',
            'GATE_DEVSTACK_DEST': dest}


def _set_aside(box, action, dest=DEST):
    """``devstack_node.set_aside`` on the node (``disable`` or
    ``enable``); the hosts, space-separated."""
    return box.run([node.PYTHON, '-m', 'gate_cloud.devstack_node',
                    'set-aside', TEMPEST_TRAIT, action],
                   env=node_code(box, dest), timeout=300).stdout.strip()


def _phase(box, name, module, dest=DEST):
    """One phase on the node (``python3 -m MODULE`` as root, this
    checkout's gate_cloud on its path); its ``[name]`` lines printed, its
    log kept."""
    logged_run(box.command([node.PYTHON, '-m', module],
                           env=node_code(box, dest)),
               LOGS / ('phase-%s.log' % name), 'phase %s' % name,
               lambda line: line.startswith('[%s]' % name) and line,
               tail=15, timeout=PHASE_TIMEOUT)


def logged_run(command, log, label, show, tail, timeout):
    """``command``'s output in ``log``, each line ``show`` turns into text
    printed; a failure prints its last ``tail`` lines and raises naming
    ``label``, its exit code, its last line and the log. Its lines."""
    with open(log, 'wb') as out:
        rc = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out,
                            stderr=subprocess.STDOUT,
                            timeout=timeout).returncode
    lines = log.read_text(errors='replace').splitlines()
    for line in lines:
        if text := show(line):
            print(text, flush=True)
    if rc != 0:
        print('\n'.join(['-- %s: its last lines --' % label]
                        + lines[-tail:]))
        raise GateError('%s failed (exit %d): %s; its log: %s' % (
            label, rc, lines[-1] if lines else 'no output', log))
    return lines


def run(keep=False):
    started = time.monotonic()
    if any(container.Container(NODES, p.stem, None, None).running()
           for p in NODES.glob('*.json')):
        raise GateError('a gate container is running (%s): python3 -m '
                        'gate_cloud devstack down' % NODES)
    prepare()
    _step('prepared (host tools, base root, sdists)', started)
    controller = ROOTS / machine('controller')
    _lay_out_root(controller)
    rendered = _render(controller)
    boxes = {name: NETWORK.container(machine(name), address, NODES)
             for name, address, _ in rendered['nodes']}
    for name, box in boxes.items():
        root = ROOTS / box.machine
        if name != 'controller':
            _lay_out_subnode(root, controller)
        shutil.copy(LOGS / ('local.conf.' + name),
                    root / 'opt/stack/devstack/local.conf')
    _step('roots laid out, local.conf of %s rendered from the job'
          % ', '.join(boxes), started)
    with running(list(boxes.values()), NETWORK, keep, started):
        NETWORK.up()
        peers = [(box.machine, box.address) for box in boxes.values()]
        for box in boxes.values():
            box.start(ROOTS / box.machine, LOGS / ('container-%s.log'
                                                  % box.machine), peers)
        _step('nodes booted on %s: %s' % (NETWORK.bridge, ', '.join(
            '%s %s' % p for p in peers)), started)
        for name, box in boxes.items():
            _stack(box, started, node=name)
        _discover_hosts(boxes['controller'], [
            (name, box.machine) for name, box in boxes.items()
            if name != 'controller'], started)
        prove(boxes['controller'], rendered['variables']['controller'],
              started)
    return 0


@contextlib.contextmanager
def running(boxes, network, keep, started):
    """The job's body; the containers and their network gone after it,
    pass or fail, unless ``keep``."""
    try:
        yield
    finally:
        if not keep:
            for box in boxes:
                box.stop()
            network.down()
    if keep:
        print('# the containers run: python3 -m gate_cloud devstack '
              'shell [NODE]; stop them: python3 -m gate_cloud devstack '
              'down')
    else:
        _step('containers stopped, %s and its rules removed'
              % network.bridge, started)


def tempest_on(box, variables, started, dest=DEST, step=_step,
               name='filters on'):
    """The job's tempest run, the filters on; its counts."""
    counts = _tempest(box, variables, name, dest=dest)
    step('tempest with the filters on: %s' % _fmt(counts), started)
    return counts


def prove(box, variables, started, dest=DEST):
    """tempest with the filters on and off, then the phases: what the
    devstack job proves."""
    plugin_and_peer = tempest_on(box, variables, started, dest)
    _filters(box, 'False', dest)
    aside = _set_aside(box, 'disable', dest)
    try:
        peer = _tempest(box, variables, 'filters off', PLUGIN_REGEX, dest)
    finally:
        _set_aside(box, 'enable', dest)
        _filters(box, 'True', dest)
    if aside:
        print('tempest without the filters: nova-compute disabled on %s '
              '(no %s, or reserved)' % (aside, TEMPEST_TRAIT))
    same_peer_tests(plugin_and_peer, peer)
    _step('tempest compute tests with the filters off: %s, the same as '
          'with them on' % _fmt(peer), started)
    for name, module in PHASES:
        _phase(box, name, module, dest)
        _step('phase %s passed' % name, started)


def _fmt(counts):
    return ', '.join('%d %s' % (counts.get(k, 0), k.lower())
                     for k in ('Passed', 'Skipped', 'Failed'))


def phase(name):
    """One phase against the cloud ``run --keep`` left."""
    phases = dict(PHASES)
    if name not in phases:
        raise GateError('no phase %r (there are: %s)'
                        % (name, ', '.join(phases)))
    _phase(_box('controller'), name, phases[name])
    print('gate_cloud devstack phase %s: passed' % name)
    return 0


def _box(node):
    box = container.Container(NODES, machine(node), None, None)
    if not box.running():
        raise GateError('no container %s is running: python3 -m '
                        'gate_cloud devstack run --keep' % box.machine)
    return box


def down():
    for path in sorted(NODES.glob('*.json')):
        container.Container(NODES, path.stem, None, None).stop()
    for network in (NETWORK, UPGRADE_NETWORK):
        network.down()


def shell(node='controller'):
    return subprocess.call(_box(node).command(['bash', '-l'],
                                              user='stack'))
