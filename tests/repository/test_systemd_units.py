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

"""The reporter's units on a real systemd: the deployment tools' handlers
replayed, not the unit files read.

The gate's base root (Debian 12, systemd 252; ``python3 -m gate_cloud
devstack prepare`` builds it, CI in the background) boots with
``systemd-nspawn`` as the machine ``itfunit-<pid>``, its root a throw-away
overlay, sharing this machine's network so that the reporter reaches the
test's Placement on 127.0.0.1 (the gate's own network unit masked: it
would address links). It adds no link, address or rule. The package is
installed as the shipped unit's comment says, from a release directory
(``tools/build_release.py``) into ``/opt/image-type-filter``, and a
stand-in ``nova-compute.service`` (a sleep) is the unit the reporter
follows. Then:

* the shipped unit, enabled as documented, runs the reporter under its
  hardening (``systemd-analyze security`` at most 4.5): it syncs a custom
  trait, and follows nova-compute through os_nova's handlers, a *stop* of
  every nova service then a *start* ("Restart nova services", "venv
  changed" and "systemd service changed" all are), and through a restart:
  stopped with it, started again by its start, syncing again;
* the same with OpenStack-Ansible's drop-in, as ``contrib/
  openstack-ansible/virt-capabilities.yml`` writes it;
* kolla's unit follows ``kolla-nova_compute-container.service`` through
  what kolla-ansible's ``kolla_container`` does to it (a restart; a
  recreate: stop, unit file rewritten, enabled, started), with a stand-in
  container engine: no container runs in this machine.

Marked ``systemd``: README's test command and the slow tier leave it out
(``pyproject.toml``); ``.ci/run`` runs it once the base root is there
(``ITF_UNIT_PROOF=required``: a missing base root is then a failure, not a
skip). Needs root, ``systemd-nspawn`` and ``unshare``; about two minutes,
most of it building the release and installing it with its dependencies.
"""

import os
import pathlib
import re
import shutil
import signal
import subprocess
import textwrap
import time

import pytest
import yaml

from gate_cloud import container
from placement_runner import writes
from tests import deploy_tools
from tests import helpers

pytestmark = pytest.mark.systemd

REPO = pathlib.Path(helpers.REPO)
BASE_ROOT = REPO / '.gate' / 'base-rootfs'
SHIPPED_UNIT = REPO / 'etc' / 'systemd' / 'virt-capabilities.service'
OSA_PLAYBOOK = REPO / 'contrib' / 'openstack-ansible' / 'virt-capabilities.yml'
KOLLA_UNIT = REPO / 'contrib' / 'kolla' / \
    'kolla-virt_capabilities-container.service'
VENV = '/opt/image-type-filter'
UNITS = '/etc/systemd/system'
REPORTER = 'virt-capabilities.service'
NOVA_COMPUTE = 'nova-compute.service'
KOLLA_REPORTER = KOLLA_UNIT.name
KOLLA_NOVA_COMPUTE = 'kolla-nova_compute-container.service'
#: The base root's unit that addresses the gate container's veth link.
GATE_NETWORK_UNIT = 'itf-gate-network.service'
#: The most ``systemd-analyze security`` may rate the shipped unit.
EXPOSURE_AT_MOST = 4.5
#: How long a unit may take to reach a state, or the reporter to sync.
DEADLINE = 120.0
BOOT_DEADLINE = 120.0
DEBIAN_PATH = '/usr/sbin:/usr/bin:/sbin:/bin'


def required():
    return os.environ.get('ITF_UNIT_PROOF') == 'required'


def missing_needs():
    if os.geteuid() != 0:
        return 'it needs root (systemd-nspawn)'
    for tool in ('systemd-nspawn', 'nsenter', 'unshare'):
        if shutil.which(tool) is None:
            return 'it needs %s' % tool
    if subprocess.run(['/usr/bin/python3', '-c', 'import ensurepip'],
                      capture_output=True).returncode != 0:
        return 'it needs Debian\'s python3 with venv (python3-venv)'
    if not (BASE_ROOT / 'usr' / 'lib' / 'systemd' / 'systemd').exists():
        return ('no base root at %s: python3 -m gate_cloud devstack '
                'prepare builds it' % BASE_ROOT)
    return None


class Machine:
    """The base root booted, its root an overlay on a tmpfs: nothing of
    the base root changes. Stopped by its own process id."""

    def __init__(self, binds, log):
        self.name = 'itfunit-%d' % os.getpid()
        self.proc = subprocess.Popen(
            ['systemd-nspawn', '--boot', '--directory', str(BASE_ROOT),
             '--volatile=overlay', '--machine', self.name,
             '--register=no', '--keep-unit', '--console=passive']
            + ['--bind-ro=%s:%s' % pair for pair in binds]
            # The gate's own network unit would address this machine's
            # links: masked (a unit file that is /dev/null).
            + ['--bind-ro=/dev/null:%s/%s' % (UNITS, GATE_NETWORK_UNIT)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True)
        self.leader = None
        try:
            self.leader = self._wait_for_leader()
            self._wait_booted()
        except BaseException:
            self.stop()
            raise

    def _wait_for_leader(self):
        own = os.readlink('/proc/self/ns/pid')
        deadline = time.monotonic() + BOOT_DEADLINE
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, 'systemd-nspawn exited'
            for child in sorted(container.children(self.proc.pid)):
                try:
                    comm = pathlib.Path('/proc/%d/comm' % child).read_text()
                    ns = os.readlink('/proc/%d/ns/pid' % child)
                except OSError:
                    continue
                if comm.strip() == 'systemd' and ns != own:
                    return child
            time.sleep(0.2)
        raise AssertionError('no systemd in %s after %ds'
                             % (self.name, BOOT_DEADLINE))

    def _wait_booted(self):
        wait_for(lambda: self.run('systemctl', 'is-system-running',
                                  check=False).stdout.strip()
                 in ('running', 'degraded'), 'the machine to boot')
        assert self.state(GATE_NETWORK_UNIT) == 'inactive'
        assert self.run('systemctl', 'is-enabled', GATE_NETWORK_UNIT,
                        check=False).stdout.strip() == 'masked'


    def run(self, *argv, check=True, stdin=None):
        proc = subprocess.run(
            ['nsenter', '-t', str(self.leader), '-a', '--', 'env', '-i',
             'PATH=' + DEBIAN_PATH, *argv],
            input=stdin, capture_output=True, text=True, timeout=300)
        if check:
            assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
        return proc

    def write(self, path, text, mode='0644'):
        self.run('sh', '-c', 'mkdir -p "$(dirname "$1")" && cat > "$1" && '
                 'chmod %s "$1"' % mode, 'write', path, stdin=text)

    def state(self, unit):
        return self.run('systemctl', 'show', '-P', 'ActiveState', unit,
                        check=False).stdout.strip()

    def main_pid(self, unit):
        return self.run('systemctl', 'show', '-P', 'MainPID',
                        unit).stdout.strip()

    def stop(self):
        if self.proc.poll() is None and self.leader:
            try:
                os.kill(self.leader, signal.SIGRTMIN + 4)  # poweroff
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


def wait_for(condition, what, deadline=DEADLINE, explain=None):
    """Until ``condition()`` holds; fails naming ``what`` at the deadline
    (a bound on a wait for a state, never a pause that stands for one),
    with what ``explain()`` says."""
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() >= end:
            raise AssertionError('waited %ds for %s%s' % (
                deadline, what, '\n' + explain() if explain else ''))
        time.sleep(0.2)


@pytest.fixture(scope='module')
def installed(tmp_path_factory):
    """/opt/image-type-filter as the unit's comment makes it, from a
    release directory: made here, at that path in a mount namespace of
    its own (this machine's /opt is not touched), with this machine's
    Debian Python, which is the base root's (both Debian 12's 3.11)."""
    why = missing_needs()
    if why:
        if required():
            pytest.fail('the units cannot be proven: %s' % why)
        pytest.skip(why)
    where = tmp_path_factory.mktemp('units')
    release = deploy_tools.build_release(str(where))
    opt = where / 'opt'
    opt.mkdir()
    comment = [line[4:] for line in SHIPPED_UNIT.read_text().splitlines()
               if line.startswith('#   ')]
    install = [line.replace('/srv/release/image-type-filter', release)
               for line in comment[:3]]
    # python3: Debian's, as on the machine (not one of PATH's earlier).
    env = dict(deploy_tools.unguarded_env(), PATH=DEBIAN_PATH)
    proc = subprocess.run(
        ['unshare', '--mount', '--propagation', 'private', 'sh', '-ec',
         'mount --bind "$0" /opt\n' + '\n'.join(install), str(opt)],
        capture_output=True, text=True, timeout=deploy_tools.PIP_TIMEOUT,
        env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return opt / 'image-type-filter', comment[3:]


@pytest.fixture(scope='module')
def machine(installed, tmp_path_factory):
    venv, _ = installed
    log = tmp_path_factory.mktemp('machine') / 'nspawn.log'
    with open(log, 'ab') as out:
        booted = Machine([(venv, VENV)], out)
    try:
        booted.run('useradd', '--system', '--home-dir', '/var/lib/nova',
                   'nova')
        booted.run('install', '-d', '-o', 'nova', '/var/lib/nova',
                   '/etc/nova')
        # nova-compute: a stand-in, enabled as a packaged one is.
        booted.write('%s/%s' % (UNITS, NOVA_COMPUTE), textwrap.dedent('''\
            [Unit]
            Description=A stand-in for nova-compute
            [Service]
            ExecStart=/bin/sleep infinity
            [Install]
            WantedBy=multi-user.target
            '''))
        booted.run('systemctl', 'daemon-reload')
        booted.run('systemctl', 'enable', '--now', NOVA_COMPUTE)
        yield booted
    finally:
        booted.stop()


@pytest.fixture
def node(machine, placement, unique):
    """The compute node's provider and nova.conf: the reporter keeps a
    custom trait on it."""
    client = placement.client()
    name = 'unit-%s' % unique
    uuid = writes.create_resource_provider(client, name)['uuid']
    trait = 'CUSTOM_UNIT_%s' % unique.upper()
    machine.write('/etc/nova/nova.conf',
                  '[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = %s\n'
                  'state_path = /var/lib/nova\n[virt_capabilities]\n'
                  'custom_traits = %s\n%s'
                  % (name, trait, placement.nova_conf_section()),
                  mode='0640')
    # As the distributions and os_nova keep it: root's, nova's group.
    machine.run('chown', 'root:nova', '/etc/nova/nova.conf')
    return client, uuid, trait


def carries(client, uuid, trait):
    return trait in client.get_provider_traits(uuid)[0]


def take_off(client, uuid, trait):
    """Remove the trait behind the reporter's back: only a reporter that
    runs and syncs puts it back."""
    traits, generation = client.get_provider_traits(uuid)
    client.put_provider_traits(uuid, traits - {trait}, generation)


def replay_os_nova_handler(machine):
    """os_nova's handlers (handlers/main.yml): "Stop services", then
    "Start services", each with daemon_reload; both listen to "Restart
    nova services", "venv changed" and "systemd service changed"."""
    for state in ('stop', 'start'):
        machine.run('systemctl', 'daemon-reload')
        machine.run('systemctl', 'enable', NOVA_COMPUTE)
        machine.run('systemctl', state, NOVA_COMPUTE)
        if state == 'stop':
            yield


def follows_nova_compute(machine, client, uuid, trait):
    """The reporter runs and syncs; stops with nova-compute and starts
    again with it, through a stop then a start and a restart."""
    def journal():
        return machine.run('journalctl', '--no-pager', '-n', '40', '-u',
                           REPORTER, check=False).stdout

    wait_for(lambda: carries(client, uuid, trait), 'the first sync',
             explain=journal)
    assert machine.state(REPORTER) == 'active'
    before = machine.main_pid(REPORTER)
    handler = replay_os_nova_handler(machine)
    next(handler)  # every nova service stopped
    assert machine.state(REPORTER) == 'inactive'
    take_off(client, uuid, trait)
    next(handler, None)  # started
    wait_for(lambda: carries(client, uuid, trait), 'a sync after the start',
             explain=journal)
    assert machine.state(REPORTER) == 'active'
    after = machine.main_pid(REPORTER)
    assert after != before
    take_off(client, uuid, trait)
    machine.run('systemctl', 'restart', NOVA_COMPUTE)
    wait_for(lambda: carries(client, uuid, trait),
             'a sync after the restart', explain=journal)
    assert machine.main_pid(REPORTER) not in (before, after)


def install_shipped_unit(machine, commands):
    """The unit's own comment: install from the virtualenv, enable."""
    for line in commands:
        machine.run('sh', '-ec', line)


def remove_reporter(machine):
    machine.run('systemctl', 'disable', '--now', REPORTER)
    machine.run('rm', '-rf', '%s/%s' % (UNITS, REPORTER),
                '%s/%s.d' % (UNITS, REPORTER))
    machine.run('systemctl', 'daemon-reload')


def test_the_shipped_unit_runs_with_nova_compute(installed, machine, node):
    client, uuid, trait = node
    install_shipped_unit(machine, installed[1])
    try:
        follows_nova_compute(machine, client, uuid, trait)
        # The journal says it ran as the unit says, hardening and all.
        assert machine.run('systemctl', 'show', '-P', 'User',
                           REPORTER).stdout.strip() == 'nova'
    finally:
        remove_reporter(machine)


def test_the_shipped_unit_is_hardened(installed, machine):
    install_shipped_unit(machine, installed[1][:1])  # installed, not enabled
    try:
        proc = machine.run('systemd-analyze', 'security', '--no-pager',
                           REPORTER)
        [exposure] = re.findall(
            r'Overall exposure level for %s: ([\d.]+)' % re.escape(
                REPORTER), proc.stdout)
        assert float(exposure) <= EXPOSURE_AT_MOST, proc.stdout
    finally:
        remove_reporter(machine)


def osa_drop_in():
    """The drop-in the OpenStack-Ansible playbook writes, its venv's
    bin directory this machine's."""
    [play] = yaml.safe_load(OSA_PLAYBOOK.read_text())
    [task] = [t for t in play['tasks']
              if 'openstack-ansible.conf' in str(t.get(
                  'ansible.builtin.copy', {}).get('dest'))]
    return task['ansible.builtin.copy']['content'].replace(
        '{{ virt_capabilities_venv_bin }}', VENV + '/bin')


def test_the_openstack_ansible_drop_in_runs_with_nova_compute(
        installed, machine, node):
    client, uuid, trait = node
    install_shipped_unit(machine, installed[1][:1])
    machine.write('%s/%s.d/openstack-ansible.conf' % (UNITS, REPORTER),
                  osa_drop_in())
    # The playbook's last task: enabled, started, daemon reloaded.
    machine.run('systemctl', 'daemon-reload')
    machine.run('systemctl', 'enable', REPORTER)
    machine.run('systemctl', 'restart', REPORTER)
    try:
        assert 'openstack-ansible.conf' in machine.run(
            'systemctl', 'show', '-P', 'DropInPaths', REPORTER).stdout
        follows_nova_compute(machine, client, uuid, trait)
    finally:
        remove_reporter(machine)


#: The engine stand-in for kolla's unit: no container runs here. ``run``
#: becomes the process the unit keeps (what ``docker run`` would be).
ENGINE = '''\
#!/bin/sh
echo "$*" >> /run/engine-calls
case "$1" in
inspect) echo registry.example/kolla/nova-compute:itf ;;
run) exec sleep infinity ;;
esac
'''


def kolla_nova_compute_unit():
    """kolla-ansible's unit for nova_compute (module_utils/
    kolla_systemd_worker.py's template), its engine a sleep here."""
    return textwrap.dedent('''\
        [Unit]
        Description=docker nova_compute
        [Service]
        ExecStart=/bin/sleep infinity
        Restart=always
        [Install]
        WantedBy=multi-user.target
        ''')


def test_the_kolla_unit_runs_with_nova_compute_container(machine):
    machine.write('/usr/bin/docker', ENGINE, mode='0755')
    machine.write('%s/%s' % (UNITS, KOLLA_NOVA_COMPUTE),
                  kolla_nova_compute_unit())
    machine.run('systemctl', 'daemon-reload')
    machine.run('systemctl', 'enable', '--now', KOLLA_NOVA_COMPUTE)
    # As the kolla playbook does: install, enable, start.
    machine.write('%s/%s' % (UNITS, KOLLA_REPORTER), KOLLA_UNIT.read_text())
    machine.run('systemctl', 'daemon-reload')
    machine.run('systemctl', 'enable', '--now', KOLLA_REPORTER)
    try:
        wait_for(lambda: machine.state(KOLLA_REPORTER) == 'active',
                 'the reporter container to start')
        first = machine.main_pid(KOLLA_REPORTER)
        # kolla_container's restart: RestartUnit.
        machine.run('systemctl', 'restart', KOLLA_NOVA_COMPUTE)
        wait_for(lambda: machine.state(KOLLA_REPORTER) == 'active'
                 and machine.main_pid(KOLLA_REPORTER) != first,
                 'the reporter to restart with nova_compute')
        second = machine.main_pid(KOLLA_REPORTER)
        # Its recreate: StopUnit, the unit file removed and written
        # again, daemon-reload, EnableUnitFiles, StartUnit.
        machine.run('systemctl', 'stop', KOLLA_NOVA_COMPUTE)
        assert machine.state(KOLLA_REPORTER) == 'inactive'
        machine.run('rm', '%s/%s' % (UNITS, KOLLA_NOVA_COMPUTE))
        machine.run('systemctl', 'daemon-reload')
        machine.write('%s/%s' % (UNITS, KOLLA_NOVA_COMPUTE),
                      kolla_nova_compute_unit())
        machine.run('systemctl', 'daemon-reload')
        machine.run('systemctl', 'enable', KOLLA_NOVA_COMPUTE)
        machine.run('systemctl', 'start', KOLLA_NOVA_COMPUTE)
        wait_for(lambda: machine.state(KOLLA_REPORTER) == 'active',
                 'the reporter to start with nova_compute')
        assert machine.main_pid(KOLLA_REPORTER) not in (first, second)
        calls = machine.run('cat', '/run/engine-calls').stdout
        assert calls.count('run --rm --name virt_capabilities') == 3, calls
    finally:
        machine.run('systemctl', 'disable', '--now', KOLLA_REPORTER,
                    KOLLA_NOVA_COMPUTE)

