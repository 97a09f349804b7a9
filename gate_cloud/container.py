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

"""Systemd containers for devstack on a network of the gate's own.

devstack wants a whole machine: systemd units, its own ``stack`` user,
packages installed with apt, a network it rewires (OVS bridges, OVN). The
machines this project is tested on have no systemd as PID 1, so the gate
boots Debian 12 with ``systemd-nspawn`` (Debian's ``systemd-container``)
from a root made by ``debootstrap``, each node in a network namespace of
its own, its veth on a bridge the gate makes (``Network``): nothing in it
binds this machine's ports, and the bridge's /24 is the nodes' own test
network, every address on it the gate's.

Out of that network only DNS (to this machine's resolver) and HTTP(S)
(the package registries) are forwarded, masqueraded; the rest is dropped,
and the nodes reach each other across the bridge. Every rule lives in
chains of our own, added once and removed at ``Network.down`` with the
bridge, and the ``ip_forward`` value the first test network found is put
back by the last to go (jobs run side by side, each on its network);
``Container.stop`` and ``Network.down`` work from another process too.
One more node is ``network.container(name, address, state_dir)``.

Facts measured on such a machine: ``../shared/devstack-notes.md``.
"""

import contextlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import time

from gate_cloud import GateError

#: The gate's controller (the one node of the grenade job).
MACHINE = 'itfgate'
SUITE = 'bookworm'
#: What debootstrap adds to minbase: systemd to boot, and what devstack's
#: first steps run before installing its own packages.
INCLUDE = ('systemd', 'systemd-sysv', 'dbus', 'sudo', 'git', 'python3',
           'python3-yaml', 'iproute2', 'iptables', 'ca-certificates',
           'lsb-release', 'procps', 'curl', 'gnupg', 'less', 'psmisc')
BOOT_DEADLINE = 120.0
PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
#: How long a clean poweroff may take before the container is killed: a
#: devstack node powers off in about 20 s, but a unit devstack gave
#: TimeoutStopSec=300 that does not stop (after grenade's upgrade) would
#: hold it for minutes; nothing in a container thrown away needs more.
STOP_DEADLINE = 30.0
DEBOOTSTRAP_TIMEOUT = 1800
IP_FORWARD = pathlib.Path('/proc/sys/net/ipv4/ip_forward')
#: ``ip_forward`` as it was before any test network of this machine came
#: up: kept by the first, put back by the last (their ITF- chains gone).
IP_FORWARD_FOUND = pathlib.Path('/run/itf-test-networks.ip_forward')


def _run(argv, timeout=600, check=True, **kwargs):
    result = subprocess.run([str(a) for a in argv], capture_output=True,
                            text=True, timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        raise GateError('%s failed (exit %d): %s' % (
            ' '.join(str(a) for a in argv[:3]), result.returncode,
            (result.stderr or result.stdout).strip()[-400:]))
    return result


def children(pid):
    """The process ids whose parent is ``pid`` (from /proc)."""
    out = set()
    for entry in pathlib.Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / 'stat').read_text()
        except OSError:
            continue  # gone meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and ")".
        fields = stat.rsplit(')', 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(pid):
            out.add(int(entry.name))
    return out


def _apt_mirror():
    """This machine's Debian mirror, from its own apt sources: the
    container installs from the same registry the host does."""
    for source in sorted(pathlib.Path('/etc/apt/sources.list.d').glob(
            '*.sources')):
        for line in source.read_text().splitlines():
            if line.startswith('URIs:') and 'security' not in line:
                return line.split()[1]
    legacy = pathlib.Path('/etc/apt/sources.list')
    if legacy.exists():
        for line in legacy.read_text().splitlines():
            parts = line.split()
            if parts[:1] == ['deb'] and 'security' not in line:
                return parts[1]
    raise GateError('no Debian mirror in /etc/apt/sources.list.d/*.sources '
                    'or /etc/apt/sources.list')


def ensure_host_tools():
    """debootstrap and systemd-nspawn from Debian's packages."""
    missing = [pkg for tool, pkg in (('debootstrap', 'debootstrap'),
                                     ('systemd-nspawn', 'systemd-container'),
                                     ('iptables', 'iptables'))
               if shutil.which(tool) is None]
    if missing:
        install = ['apt-get', '-o', 'DPkg::Lock::Timeout=900', 'install',
                   '-y', '-q'] + missing
        if _run(install, timeout=1200, check=False).returncode != 0:
            # A new machine's package lists may be missing or old.
            _run(['apt-get', '-o', 'DPkg::Lock::Timeout=900', 'update',
                  '-q'], timeout=1200)
            _run(install, timeout=1200)


def run_in_root(root, argv, env=None, timeout=300):
    """``argv`` in the root (chroot, not booted), with a clean
    environment: ``env`` over PATH and LANG."""
    base = {'PATH': PATH, 'LANG': 'C.UTF-8', **(env or {})}
    return _run(['chroot', root, 'env', '-i'] + ['%s=%s' % kv for kv in
                                                 base.items()] + argv,
                timeout=timeout)


def build_rootfs(root, log):
    """A Debian 12 root able to boot systemd and reach the registries.

    The host's CA bundle additions and pip settings are copied in: the
    registries are reached through the same TLS inspection as here.
    """
    root = pathlib.Path(root)
    partial = root.with_name(root.name + '.partial')
    shutil.rmtree(partial, ignore_errors=True)
    with open(log, 'ab') as out:
        rc = subprocess.run(
            # Its mounts (the root's /proc, in the checkout pip walks) seen
            # by nothing else; no path of this machine (CI's TMPDIR) in env.
            ['unshare', '--mount', 'debootstrap', '--variant=minbase',
             '--include=' + ','.join(INCLUDE), SUITE, str(partial),
             _apt_mirror()], stdout=out, stderr=out,
            env={k: v for k, v in os.environ.items() if k != 'TMPDIR'},
            timeout=DEBOOTSTRAP_TIMEOUT).returncode
    if rc != 0:
        raise GateError('debootstrap %s failed (exit %d): see %s'
                        % (SUITE, rc, log))
    for source in pathlib.Path('/etc/apt/sources.list.d').glob('*.sources'):
        shutil.copy(source, partial / 'etc/apt/sources.list.d' / source.name)
    if any((partial / 'etc/apt/sources.list.d').glob('*.sources')):
        (partial / 'etc/apt/sources.list').write_text('')
    extra_cas = pathlib.Path('/usr/local/share/ca-certificates')
    if extra_cas.is_dir():
        shutil.copytree(extra_cas, partial / 'usr/local/share/ca-certificates',
                        dirs_exist_ok=True)
        run_in_root(partial, ['update-ca-certificates'])
    if pathlib.Path('/etc/pip.conf').exists():
        shutil.copy('/etc/pip.conf', partial / 'etc/pip.conf')
    _write_guest_files(partial)
    partial.rename(root)


def _write_guest_files(root):
    units = root / 'etc/systemd/system'
    # devstack restarts iscsid for nova; the kernel here has no iSCSI
    # (NETLINK_ISCSI), and the real daemon times out. Nothing here uses
    # iSCSI: a unit that does nothing answers devstack's restart.
    (units / 'iscsid.service').write_text(
        '[Unit]\nDescription=No iSCSI in this container\n\n'
        '[Service]\nType=oneshot\nRemainAfterExit=yes\n'
        'ExecStart=/bin/true\n\n[Install]\nWantedBy=multi-user.target\n')
    _want(root, 'iscsid.service')


def _want(root, unit):
    wants = root / 'etc/systemd/system/multi-user.target.wants'
    wants.mkdir(parents=True, exist_ok=True)
    link = wants / unit
    if not link.is_symlink():
        link.symlink_to('/etc/systemd/system/' + unit)


def _host_nameservers():
    servers = [line.split()[1] for line in
               pathlib.Path('/etc/resolv.conf').read_text().splitlines()
               if line.startswith('nameserver') and len(line.split()) > 1]
    if not servers:
        raise GateError('no nameserver in /etc/resolv.conf')
    return servers


class _StateFile:
    """A JSON file of what was made, so that another process (``down``)
    can undo it."""

    def __init__(self, path):
        self.path = pathlib.Path(path)

    def read(self):
        try:
            return json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}

    def save(self, **values):
        state = self.read()
        state.update(values)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix('.new')
        tmp.write_text(json.dumps(state, indent=1))
        tmp.replace(self.path)


class Network:
    """A bridge of ours with a /24, this machine ``.1`` on it, and the
    rules the module's doc says (the bridge's frames pass iptables where
    br_netfilter is loaded)."""

    def __init__(self, bridge, subnet, chains, state_dir):
        self.bridge = bridge
        self.subnet = subnet
        self.host_addr = subnet.rsplit('.', 1)[0] + '.1'
        self.prefix = int(subnet.rsplit('/', 1)[1])
        self.forward_chain = chains + '-FWD'
        self.nat_chain = chains + '-NAT'
        self.state_dir = pathlib.Path(state_dir)
        self.state = _StateFile(self.state_dir / ('%s.json' % bridge))

    def container(self, machine, address, state_dir=None):
        """A node of this network (not started): ``machine`` at
        ``address``."""
        return Container(state_dir or self.state_dir, machine, address,
                         self)

    def up(self):
        """The bridge, its address, the rules; ``ip_forward`` on."""
        if _link_exists(self.bridge):
            raise GateError('%s exists: another gate network runs here '
                            '(python3 -m gate_cloud devstack down)'
                            % self.bridge)
        with contextlib.suppress(FileExistsError):  # the first up keeps it
            with open(IP_FORWARD_FOUND, 'x') as found:
                found.write(IP_FORWARD.read_text())
        self.state.save(bridge=True)
        try:
            self._make()
        except BaseException:
            self.down()
            raise
        IP_FORWARD.write_text('1\n')

    def _make(self):
        _run(['ip', 'link', 'add', self.bridge, 'type', 'bridge'])
        _run(['ip', 'addr', 'add', '%s/%d' % (self.host_addr, self.prefix),
              'dev', self.bridge])
        _run(['ip', 'link', 'set', self.bridge, 'up'])
        self.state.save(rules=True)
        _iptables('-N', self.forward_chain)
        _iptables('-t', 'nat', '-N', self.nat_chain)
        link = self.bridge
        rules = [['-i', link, '-o', link, '-j', 'ACCEPT'],
                 ['-o', link, '-m', 'conntrack', '--ctstate',
                  'RELATED,ESTABLISHED', '-j', 'ACCEPT']]
        for ns in _host_nameservers():
            for proto in ('udp', 'tcp'):
                rules.append(['-i', link, '-d', ns, '-p', proto,
                              '--dport', '53', '-j', 'ACCEPT'])
        rules.append(['-i', link, '-p', 'tcp', '-m', 'multiport',
                      '--dports', '80,443', '-j', 'ACCEPT'])
        rules.append(['-i', link, '-j', 'DROP'])
        rules.append(['-o', link, '-j', 'DROP'])
        for rule in rules:
            _iptables('-A', self.forward_chain, *rule)
        _iptables('-I', 'FORWARD', '-j', self.forward_chain)
        _iptables('-t', 'nat', '-A', self.nat_chain, '-s', self.subnet, '!',
                  '-d', self.subnet, '-j', 'MASQUERADE')
        _iptables('-t', 'nat', '-I', 'POSTROUTING', '-j', self.nat_chain)

    def down(self):
        """Remove the rules and the bridge; the last test network to go
        restores ``ip_forward``: safe to call twice, from any process,
        once its containers are stopped."""
        state = self.state.read()
        if state.get('rules'):
            _remove_rules(self.forward_chain, self.nat_chain)
        if state.get('bridge') and _link_exists(self.bridge):
            _run(['ip', 'link', 'delete', self.bridge], check=False)
        if IP_FORWARD_FOUND.exists() and 'ITF-' not in _iptables(
                '-S', 'FORWARD').stdout:
            IP_FORWARD.write_text(IP_FORWARD_FOUND.read_text())
            IP_FORWARD_FOUND.unlink(missing_ok=True)
        self.state.path.unlink(missing_ok=True)


class Container:
    """One booted node on a ``Network``, found again from
    ``state_dir/MACHINE.json``."""

    def __init__(self, state_dir, machine, address, network):
        self.machine = machine
        self.address = address
        self.network = network
        self.state = _StateFile(pathlib.Path(state_dir) /
                                ('%s.json' % machine))

    @property
    def leader(self):
        """The container's PID 1 (its systemd), as seen from here."""
        return self.state.read().get('leader')

    def running(self):
        pid = self.state.read().get('nspawn')
        return bool(pid) and _alive(pid)

    # --- start -------------------------------------------------------
    def start(self, root, log, peers=()):
        """Boot ``root`` on the network at its address, every node of
        ``peers`` ((name, address) pairs) in its /etc/hosts; raise if it
        does not reach ``running`` (or ``degraded``) in time."""
        if self.running():
            raise GateError('container %s is already running (%s): '
                            'python3 -m gate_cloud devstack down'
                            % (self.machine, self.state.path))
        self._write_node_files(pathlib.Path(root), peers)
        out = open(log, 'ab')
        proc = subprocess.Popen(
            ['systemd-nspawn', '--boot', '--directory', str(root),
             '--machine', self.machine, '--register=no', '--keep-unit',
             '--network-bridge', self.network.bridge, '--console=passive'],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out,
            start_new_session=True)
        out.close()
        self.state.save(nspawn=proc.pid, root=str(root))
        try:
            self.state.save(leader=self._wait_for_leader(proc))
            self._wait_booted(proc)
        except BaseException:
            self.stop()
            raise

    def _write_node_files(self, root, peers):
        """Its name, every node's address in /etc/hosts, this machine's
        resolver, and a unit that sets its address at each boot (a kept
        container rebooted by hand has it too)."""
        (root / 'etc/hostname').write_text(self.machine + '\n')
        hosts = dict(peers)
        hosts[self.machine] = self.address
        (root / 'etc/hosts').write_text('127.0.0.1 localhost\n' + ''.join(
            '%s %s\n' % (address, name) for name, address in hosts.items()))
        (root / 'etc/resolv.conf').unlink(missing_ok=True)
        (root / 'etc/resolv.conf').write_text(''.join(
            'nameserver %s\n' % ns for ns in _host_nameservers()))
        unit = 'itf-gate-network.service'
        (root / 'etc/systemd/system' / unit).write_text(
            '[Unit]\nDescription=The gate node\'s address\n'
            'Before=network-online.target\nWants=network-online.target\n\n'
            '[Service]\nType=oneshot\nRemainAfterExit=yes\n'
            'ExecStart=/sbin/ip link set host0 up\n'
            'ExecStart=/sbin/ip addr replace %s/%d dev host0\n'
            'ExecStart=/sbin/ip route replace default via %s\n\n'
            '[Install]\nWantedBy=multi-user.target\n'
            % (self.address, self.network.prefix, self.network.host_addr))
        _want(root, unit)

    def _wait_for_leader(self, proc):
        deadline = time.monotonic() + BOOT_DEADLINE
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise GateError('systemd-nspawn exited (%d) before %s '
                                'booted' % (proc.returncode, self.machine))
            # systemd-nspawn forks a helper that forks the container's
            # PID 1 and exits: the leader is the child that runs systemd
            # in a PID namespace of its own.
            own = os.readlink('/proc/self/ns/pid')
            for child in sorted(children(proc.pid)):
                try:
                    comm = pathlib.Path('/proc/%d/comm' % child).read_text()
                    ns = os.readlink('/proc/%d/ns/pid' % child)
                except (FileNotFoundError, ProcessLookupError):
                    continue
                if comm.strip() == 'systemd' and ns != own:
                    return child
            time.sleep(0.2)
        raise GateError('systemd-nspawn started no container %s in %ds'
                        % (self.machine, BOOT_DEADLINE))

    def _wait_booted(self, proc):
        deadline = time.monotonic() + BOOT_DEADLINE
        state = ''
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise GateError('container %s stopped while booting '
                                '(systemd-nspawn exit %d)'
                                % (self.machine, proc.returncode))
            state = self.run(['systemctl', 'is-system-running'],
                             check=False, timeout=30).stdout.strip()
            if state in ('running', 'degraded'):
                return
            time.sleep(1)
        raise GateError('container %s did not finish booting in %ds '
                        '(systemctl is-system-running: %s)'
                        % (self.machine, BOOT_DEADLINE, state or 'no answer'))

    # --- use ---------------------------------------------------------
    def command(self, argv, user=None, env=None):
        """The argv that runs ``argv`` inside the container (as ``user``),
        with a clean environment."""
        if not self.leader:
            raise GateError('container %s is not running (%s)'
                            % (self.machine, self.state.path))
        base = {'PATH': PATH, 'LANG': 'C.UTF-8', 'HOME': '/root',
                **(env or {})}
        inner = ['env', '-i'] + ['%s=%s' % kv for kv in base.items()]
        if user:
            inner = ['runuser', '-u', user, '--'] + inner + [
                'HOME=/opt/stack' if user == 'stack' else 'HOME=/home/'
                + user]
        return ['nsenter', '-t', str(self.leader), '-a', '--'] + inner + [
            str(a) for a in argv]

    def run(self, argv, user=None, env=None, check=True, timeout=600,
            **kwargs):
        return _run(self.command(argv, user, env), timeout=timeout,
                    check=check, **kwargs)

    def path(self, inside):
        """Where a path of the container lies on this machine."""
        return pathlib.Path(self.state.read()['root']) / str(
            inside).lstrip('/')

    # --- stop --------------------------------------------------------
    def stop(self):
        """Power the container off (its veth goes with it). Safe to call
        twice, from any process."""
        state = self.state.read()
        nspawn = state.get('nspawn')
        if nspawn and _alive(nspawn):
            leader = state.get('leader')
            if leader and _alive(leader):
                # SIGRTMIN+4 asks systemd for a clean poweroff.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(leader, signal.SIGRTMIN + 4)
            if not _wait_gone(nspawn, STOP_DEADLINE):
                _kill_group(nspawn)
                _wait_gone(nspawn, 10)
        self.state.path.unlink(missing_ok=True)


def _iptables(*args, check=True):
    return _run(['iptables', '-w', '30'] + list(args), timeout=60,
                check=check)


def _remove_rules(forward_chain, nat_chain):
    for table, chain, parent in (((), forward_chain, 'FORWARD'),
                                 (('-t', 'nat'), nat_chain, 'POSTROUTING')):
        while _iptables(*table, '-D', parent, '-j', chain,
                        check=False).returncode == 0:
            pass
        _iptables(*table, '-F', chain, check=False)
        _iptables(*table, '-X', chain, check=False)


def _link_exists(name):
    return pathlib.Path('/sys/class/net', name).exists()


def _alive(pid):
    """Running, and not a zombie: a ``systemd-nspawn`` whose parent
    exited stays a zombie where PID 1 reaps nothing."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = pathlib.Path('/proc/%d/stat' % pid)
    try:
        return stat.read_text().rsplit(')', 1)[1].split()[0] != 'Z'
    except (FileNotFoundError, IndexError):
        return False


def _wait_gone(pid, seconds):
    deadline = time.monotonic() + seconds
    while _alive(pid):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def _kill_group(pid):
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
