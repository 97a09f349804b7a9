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

"""libvirt: the system's libvirtd and virtlogd, run by the cloud with a
private socket, for the libvirt nova-compute.

The one service that changes a system file: ``/etc/libvirt/qemu.conf``
(backed up first, put back by ``teardown``), and QEMU's per-domain logs,
which libvirt writes to a compiled-in directory (moved into the cloud's
logs by ``teardown``).
"""

import json
import pathlib
import shutil
import subprocess

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes

NAME = 'libvirt'
PORTS = {}
DEBIAN = ('libvirt-daemon', 'libvirt-daemon-system',
          'libvirt-daemon-driver-qemu', 'libvirt-clients', 'qemu-system-x86',
          'qemu-utils',
          # libvirt-python is built against these.
          'libvirt-dev', 'pkg-config')
#: Nova's libvirt driver imports it (built from source: see DEBIAN).
PYPI = ('libvirt-python',)
NEEDS = ()
LIBVIRTD = 'libvirtd'
VIRTLOGD = 'virtlogd'

QEMU_CONF = pathlib.Path('/etc/libvirt/qemu.conf')
#: /dev/kvm is root-only here (no udev): as its default user libvirt
#: re-probes QEMU for 48 s on every domain start.
QEMU_CONF_LINES = 'user = "+0"\ngroup = "+0"\n'
RUN_LIBVIRT = pathlib.Path('/run/libvirt')
VIRTLOGD_SOCKET = RUN_LIBVIRT / 'virtlogd-sock'
#: Where QEMU's per-domain logs go (compiled into libvirt, not in
#: qemu.conf): what the cloud adds there moves to its own logs on down.
QEMU_LOG_DIR = pathlib.Path('/var/log/libvirt/qemu')
QEMU_LOGS_BEFORE = 'qemu-logs-before.json'


def run_dir():
    return layout.path('libvirt', 'run')


def socket_path():
    return run_dir() / 'libvirt-sock'


def connection_uri():
    """Where nova-compute and virsh reach this libvirtd."""
    return 'qemu+unix:///system?socket=%s' % socket_path()


def backup_dir():
    return layout.path('backup')


def configure(cloud):
    """qemu.conf with the cloud's lines (the original backed up once) and
    libvirtd.conf with a private socket."""
    backup = backup_dir()
    backup.mkdir(parents=True, exist_ok=True)
    if not (backup / 'qemu.conf').exists() and \
            not (backup / 'qemu.conf.absent').exists():
        if QEMU_CONF.exists():
            shutil.copy2(QEMU_CONF, backup / 'qemu.conf')
        else:
            inifile.write(backup / 'qemu.conf.absent', '')
        if not RUN_LIBVIRT.exists():
            inifile.write(backup / 'run-libvirt.absent', '')
    if not (backup / QEMU_LOGS_BEFORE).exists():
        inifile.write(backup / QEMU_LOGS_BEFORE, json.dumps(
            sorted(p.name for p in QEMU_LOG_DIR.glob('*'))
            if QEMU_LOG_DIR.is_dir() else None))
    original = (backup / 'qemu.conf').read_text() if (
        backup / 'qemu.conf').exists() else ''
    QEMU_CONF.parent.mkdir(parents=True, exist_ok=True)
    QEMU_CONF.write_text(original + '\n# gate_cloud (restored on down)\n'
                         + QEMU_CONF_LINES)
    run_dir().mkdir(parents=True, exist_ok=True)
    inifile.write(layout.path('libvirt', 'libvirtd.conf'), '\n'.join([
        'unix_sock_dir = "%s"' % run_dir(),
        'unix_sock_rw_perms = "0700"',
        'auth_unix_rw = "none"',
        'auth_unix_ro = "none"',
        'log_outputs = "3:file:%s"' % layout.path('logs', 'libvirtd-app.log'),
        '']))


def start(cloud):
    logd = processes.start(VIRTLOGD, ['/usr/sbin/virtlogd'])
    processes.wait_for(VIRTLOGD, VIRTLOGD_SOCKET.exists, logd)
    processes.start(LIBVIRTD, [
        '/usr/sbin/libvirtd', '-f', layout.path('libvirt', 'libvirtd.conf'),
        '-p', layout.path('libvirt', 'libvirtd.pid')])


def wait(cloud):
    processes.wait_for(LIBVIRTD, socket_path().exists,
                       processes.started(LIBVIRTD),
                       log=layout.path('logs', 'libvirtd.log'))


def stop(cloud):
    """The domains Nova left (nova-compute refuses to start beside domains
    it does not know), then libvirtd and virtlogd."""
    destroy_domains()
    processes.stop(LIBVIRTD)
    processes.stop(VIRTLOGD)


def teardown(cloud):
    restore_system_files()


def destroy_domains():
    if not socket_path().exists():
        return
    uri = connection_uri()
    try:
        names = subprocess.run(['virsh', '-c', uri, 'list', '--all',
                                '--name'], capture_output=True, text=True,
                               timeout=30).stdout.split()
        for name in names:
            if name.startswith('instance-'):
                subprocess.run(['virsh', '-c', uri, 'destroy', name],
                               capture_output=True, timeout=30)
                subprocess.run(['virsh', '-c', uri, 'undefine', '--nvram',
                                name], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        pass


def restore_system_files():
    """Put back every system file the cloud changed."""
    backup = backup_dir()
    if (backup / 'qemu.conf').exists():
        shutil.copy2(backup / 'qemu.conf', QEMU_CONF)
        (backup / 'qemu.conf').unlink()
    if (backup / 'qemu.conf.absent').exists():
        QEMU_CONF.unlink(missing_ok=True)
        (backup / 'qemu.conf.absent').unlink()
    if (backup / 'run-libvirt.absent').exists():
        shutil.rmtree(RUN_LIBVIRT, ignore_errors=True)
        (backup / 'run-libvirt.absent').unlink()
    move_qemu_logs(backup / QEMU_LOGS_BEFORE, layout.path('logs', 'qemu'))


def move_qemu_logs(before_file, into, log_dir=QEMU_LOG_DIR):
    """Move the QEMU logs the cloud's domains left in ``log_dir`` (those not
    listed in ``before_file``) into the cloud's logs; remove ``log_dir`` if
    the cloud made it."""
    if not before_file.exists():
        return
    before = json.loads(before_file.read_text())
    if log_dir.is_dir():
        for path in log_dir.iterdir():
            if before is None or path.name not in before:
                into.mkdir(parents=True, exist_ok=True)
                shutil.move(str(path), str(into / path.name))
        if before is None and not any(log_dir.iterdir()):
            log_dir.rmdir()
    before_file.unlink()
