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

"""A systemd container for devstack: its own root, its own network.

devstack wants a whole machine: systemd units, its own ``stack`` user,
packages installed with apt, a network it rewires (OVS bridges, OVN). The
machines this project is tested on have no systemd as PID 1, so the gate
boots Debian 12 with ``systemd-nspawn`` (Debian's ``systemd-container``)
from a root made by ``debootstrap``, in a network namespace of its own
(``--network-veth``): nothing in it binds this machine's ports, and the
veth pair's /30 is the container's own test network.

Out of that network only DNS (to this machine's resolver) and HTTP(S)
(the package registries) are forwarded, masqueraded; the rest is dropped.
Every rule lives in chains of our own, added once and removed at ``stop``
with the container, its veth link and the ``ip_forward`` value found
before; ``stop`` works from another process too, from ``state.json``.

Facts measured on such a machine: ``../shared/devstack-notes.md``.
"""

import collections
import json
import os
import pathlib
import shutil
import signal
import subprocess
import time

from gate_cloud import GateError

Network = collections.namedtuple('Network', 'machine host_addr guest_addr '
                                 'subnet forward_chain nat_chain')
GATE = Network('itfgate', '10.254.253.1', '10.254.253.2', '10.254.253.0/30',
               'ITF-GATE-FWD', 'ITF-GATE-NAT')
GUEST_ADDR = GATE.guest_addr
PREFIX = 30
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


def in_root_env():
    """The environment of a program run in the new root (debootstrap's
    second stage, chroot): this one without what names a path of this
    machine (TMPDIR: CI points it at a directory the root does not
    have)."""
    return {k: v for k, v in os.environ.items() if k != 'TMPDIR'}


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
            ['debootstrap', '--variant=minbase',
             '--include=' + ','.join(INCLUDE), SUITE, str(partial),
             _apt_mirror()], stdout=out, stderr=out, env=in_root_env(),
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
        _run(['chroot', partial, 'update-ca-certificates'], timeout=300,
             env=in_root_env())
    for conf in (pathlib.Path('/etc/pip.conf'),):
        if conf.exists():
            shutil.copy(conf, partial / 'etc' / conf.name)
    write_guest_files(partial)
    partial.rename(root)


def write_guest_files(root, net=GATE):
    (root / 'etc/hostname').write_text(net.machine + '\n')
    hosts = '127.0.0.1 localhost\n%s %s\n' % (net.guest_addr, net.machine)
    (root / 'etc/hosts').write_text(hosts)
    (root / 'etc/resolv.conf').unlink(missing_ok=True)
    (root / 'etc/resolv.conf').write_text(''.join(
        'nameserver %s\n' % ns for ns in _host_nameservers()))
    units = root / 'etc/systemd/system'
    # devstack restarts iscsid for nova; the kernel here has no iSCSI
    # (NETLINK_ISCSI), and the real daemon times out. Nothing here uses
    # iSCSI: a unit that does nothing answers devstack's restart.
    (units / 'iscsid.service').write_text(
        '[Unit]\nDescription=No iSCSI in this container\n\n'
        '[Service]\nType=oneshot\nRemainAfterExit=yes\n'
        'ExecStart=/bin/true\n\n[Install]\nWantedBy=multi-user.target\n')
    # The guest's address: set by a unit at boot, so that a kept
    # container rebooted by hand has it too.
    (units / 'itf-gate-network.service').write_text(
        '[Unit]\nDescription=The gate container\'s veth address\n'
        'Before=network-online.target\nWants=network-online.target\n\n'
        '[Service]\nType=oneshot\nRemainAfterExit=yes\n'
        'ExecStart=/sbin/ip link set host0 up\n'
        'ExecStart=/sbin/ip addr replace %s/%d dev host0\n'
        'ExecStart=/sbin/ip route replace default via %s\n\n'
        '[Install]\nWantedBy=multi-user.target\n'
        % (net.guest_addr, PREFIX, net.host_addr))
    wants = units / 'multi-user.target.wants'
    wants.mkdir(parents=True, exist_ok=True)
    for unit in ('iscsid.service', 'itf-gate-network.service'):
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


class Container:
    """One booted container, found again from ``state_dir/state.json``."""

    def __init__(self, state_dir, net=GATE):
        self.net, self.link = net, 've-' + net.machine  # nspawn's name
        self.state_dir = pathlib.Path(state_dir)
        self.state_file = self.state_dir / 'state.json'

    # --- state -------------------------------------------------------
    def _state(self):
        try:
            return json.loads(self.state_file.read_text())
        except FileNotFoundError:
            return {}

    def _save(self, **values):
        state = self._state()
        state.update(values)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix('.new')
        tmp.write_text(json.dumps(state, indent=1))
        tmp.replace(self.state_file)

    @property
    def leader(self):
        """The container's PID 1 (its systemd), as seen from here."""
        return self._state().get('leader')

    def running(self):
        pid = self._state().get('nspawn')
        return bool(pid) and _alive(pid)

    # --- start -------------------------------------------------------
    def start(self, root, log):
        """Boot ``root`` and give it its network; raise if it does not
        reach ``running`` (or ``degraded``) in time."""
        if self.running():
            raise GateError('a gate container is already running (%s): '
                            'python3 -m gate_cloud devstack down'
                            % self.state_file)
        if _link_exists(self.link):
            raise GateError('%s exists: another container of this name '
                            'runs here' % self.link)
        out = open(log, 'ab')
        proc = subprocess.Popen(
            ['systemd-nspawn', '--boot', '--directory', str(root),
             '--machine', self.net.machine, '--register=no', '--keep-unit',
             '--network-veth', '--console=passive'],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out,
            start_new_session=True)
        out.close()
        self._save(nspawn=proc.pid, root=str(root))
        try:
            leader = self._wait_for_leader(proc)
            self._save(leader=leader)
            self._host_network()
            self._wait_booted(proc)
        except BaseException:
            self.stop()
            raise

    def _wait_for_leader(self, proc):
        deadline = time.monotonic() + BOOT_DEADLINE
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise GateError('systemd-nspawn exited (%d) before the '
                                'container booted' % proc.returncode)
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
        raise GateError('systemd-nspawn started no container in %ds'
                        % BOOT_DEADLINE)

    def _wait_booted(self, proc):
        deadline = time.monotonic() + BOOT_DEADLINE
        state = ''
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise GateError('the container stopped while booting '
                                '(systemd-nspawn exit %d)' % proc.returncode)
            state = self.run(['systemctl', 'is-system-running'],
                             check=False, timeout=30).stdout.strip()
            if state in ('running', 'degraded'):
                return
            time.sleep(1)
        raise GateError('the container did not finish booting in %ds '
                        '(systemctl is-system-running: %s)'
                        % (BOOT_DEADLINE, state or 'no answer'))

    def _host_network(self):
        """Address the host's end; forward DNS and HTTP(S) out, nothing
        else; masquerade the container's address."""
        deadline = time.monotonic() + BOOT_DEADLINE
        while not _link_exists(self.link):
            if time.monotonic() > deadline:
                raise GateError('systemd-nspawn made no %s link' % self.link)
            time.sleep(0.2)
        forward = pathlib.Path('/proc/sys/net/ipv4/ip_forward')
        if 'ip_forward' not in self._state():
            self._save(ip_forward=forward.read_text().strip())
        net = self.net
        _run(['ip', 'addr', 'replace', '%s/%d' % (net.host_addr, PREFIX),
              'dev', self.link])
        _run(['ip', 'link', 'set', self.link, 'up'])
        self._save(rules=True)
        _iptables('-N', net.forward_chain)
        _iptables('-t', 'nat', '-N', net.nat_chain)
        rules = [['-o', self.link, '-m', 'conntrack', '--ctstate',
                  'RELATED,ESTABLISHED', '-j', 'ACCEPT']]
        for ns in _host_nameservers():
            for proto in ('udp', 'tcp'):
                rules.append(['-i', self.link, '-d', ns, '-p', proto,
                              '--dport', '53', '-j', 'ACCEPT'])
        rules.append(['-i', self.link, '-p', 'tcp', '-m', 'multiport',
                      '--dports', '80,443', '-j', 'ACCEPT'])
        rules.append(['-i', self.link, '-j', 'DROP'])
        rules.append(['-o', self.link, '-j', 'DROP'])
        for rule in rules:
            _iptables('-A', net.forward_chain, *rule)
        _iptables('-I', 'FORWARD', '-j', net.forward_chain)
        _iptables('-t', 'nat', '-A', net.nat_chain, '-s', net.subnet, '!',
                  '-d', net.subnet, '-j', 'MASQUERADE')
        _iptables('-t', 'nat', '-I', 'POSTROUTING', '-j', net.nat_chain)
        forward.write_text('1\n')

    # --- use ---------------------------------------------------------
    def command(self, argv, user=None, env=None):
        """The argv that runs ``argv`` inside the container (as ``user``),
        with a clean environment."""
        if not self.leader:
            raise GateError('no gate container is running (%s)'
                            % self.state_file)
        base = {'PATH': PATH, 'LANG': 'C.UTF-8', 'HOME': '/root'}
        base.update(env or {})
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
        return pathlib.Path(self._state()['root']) / str(inside).lstrip('/')

    # --- stop --------------------------------------------------------
    def stop(self):
        """Power the container off, then remove its network rules and
        restore ``ip_forward``. Safe to call twice, from any process."""
        state = self._state()
        nspawn = state.get('nspawn')
        if nspawn and _alive(nspawn):
            leader = state.get('leader')
            if leader and _alive(leader):
                # SIGRTMIN+4 asks systemd for a clean poweroff.
                try:
                    os.kill(leader, signal.SIGRTMIN + 4)
                except ProcessLookupError:
                    pass
            if not _wait_gone(nspawn, STOP_DEADLINE):
                _kill_group(nspawn)
                _wait_gone(nspawn, 10)
        if state.get('rules'):
            _remove_rules(self.net)
        if 'ip_forward' in state:
            pathlib.Path('/proc/sys/net/ipv4/ip_forward').write_text(
                state['ip_forward'] + '\n')
        if _link_exists(self.link):
            _run(['ip', 'link', 'delete', self.link], check=False)
        self.state_file.unlink(missing_ok=True)


def _iptables(*args):
    _run(['iptables', '-w', '30'] + list(args), timeout=60)


def _remove_rules(net):
    for table, chain, parent in ((None, net.forward_chain, 'FORWARD'),
                                 ('nat', net.nat_chain, 'POSTROUTING')):
        prefix = ['iptables', '-w', '30'] + (['-t', table] if table else [])
        while _run(prefix + ['-D', parent, '-j', chain], check=False,
                   timeout=60).returncode == 0:
            pass
        _run(prefix + ['-F', chain], check=False, timeout=60)
        _run(prefix + ['-X', chain], check=False, timeout=60)


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
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
