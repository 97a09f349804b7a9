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

"""Each part of the cloud: how it is configured, started and made ready."""

import json
import os
import pathlib
import shutil
import subprocess

from gate_cloud import configs
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud.processes import GateError

DATABASES = ('keystone', 'glance', 'placement', 'nova_api', 'nova',
             'nova_cell0')


def write(path, text, mode=0o600):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    return path


# -- MariaDB -----------------------------------------------------------------

def mariadb_socket():
    return layout.path('mariadb', 'mysqld.sock')


def start_mariadb(creds):
    data = layout.path('mariadb', 'data')
    data.mkdir(parents=True, exist_ok=True)
    processes.run('mariadb-install-db', [
        'mariadb-install-db', '--no-defaults', '--datadir=%s' % data,
        '--user=root', '--skip-test-db', '--skip-name-resolve'],
        timeout=300)
    start_mariadb_server()
    grants = ["CREATE USER IF NOT EXISTS '{u}'@'127.0.0.1' IDENTIFIED BY "
              "'{p}';".format(u=creds['db_user'], p=creds['db_password'])]
    grants += ['CREATE DATABASE IF NOT EXISTS %s CHARACTER SET utf8;' % db
               for db in DATABASES]
    grants.append("GRANT ALL PRIVILEGES ON *.* TO '%s'@'127.0.0.1';"
                  % creds['db_user'])
    sql(' '.join(grants), 'creating the databases')


def start_mariadb_server():
    data = layout.path('mariadb', 'data')
    log = layout.path('logs', 'mariadb.log')
    proc = processes.start('mariadb', [
        '/usr/sbin/mariadbd', '--no-defaults', '--datadir=%s' % data,
        '--socket=%s' % mariadb_socket(), '--bind-address=%s' % layout.HOST,
        '--port=%d' % layout.PORTS['mariadb'], '--user=root',
        '--pid-file=%s' % layout.path('mariadb', 'mariadbd.pid'),
        '--log-error=%s' % log, '--skip-name-resolve',
        '--innodb-buffer-pool-size=64M', '--max-connections=400',
        '--innodb-flush-log-at-trx-commit=2',
        '--tmpdir=%s' % layout.path('tmp')], log=log)
    processes.wait_for('mariadb', processes.port_open(
        layout.PORTS['mariadb']), proc, log=log)


def sql(statements, what):
    """Run SQL as MariaDB's root over the private socket (stdin, so no
    password is on a command line)."""
    try:
        proc = subprocess.run(
            ['mariadb', '--no-defaults', '-S', str(mariadb_socket()),
             '-u', 'root'], input=statements.encode(), capture_output=True,
            timeout=120)
    except subprocess.TimeoutExpired:
        raise GateError('mariadb: %s timed out' % what)
    if proc.returncode:
        raise GateError('mariadb: %s failed: %s' % (
            what, proc.stderr.decode(errors='replace').strip()[:200]))


# -- RabbitMQ ----------------------------------------------------------------

def rabbit_env():
    base = layout.path('rabbitmq')
    env = layout.env_for_services()
    env.update({
        'HOME': str(base),  # its Erlang cookie stays private
        'RABBITMQ_CONF_ENV_FILE': str(base / 'rabbitmq-env.conf'),
        'RABBITMQ_CONFIG_FILE': str(base / 'rabbitmq'),
        'RABBITMQ_ENABLED_PLUGINS_FILE': str(base / 'enabled_plugins'),
        'RABBITMQ_MNESIA_BASE': str(base / 'mnesia'),
        'RABBITMQ_LOG_BASE': str(layout.path('logs', 'rabbitmq')),
        'RABBITMQ_PID_FILE': str(base / 'rabbitmq.pid'),
        'RABBITMQ_NODENAME': 'gate@localhost',
        'RABBITMQ_NODE_IP_ADDRESS': layout.HOST,
        'RABBITMQ_NODE_PORT': str(layout.PORTS['rabbitmq']),
        'RABBITMQ_DIST_PORT': str(layout.PORTS['rabbitmq-dist']),
        'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS':
            '-kernel inet_dist_use_interface {127,0,0,1}',
        'ERL_EPMD_ADDRESS': layout.HOST,
        'ERL_EPMD_PORT': str(layout.PORTS['epmd']),
    })
    return env


def start_rabbitmq(creds):
    base = layout.path('rabbitmq')
    (base / 'mnesia').mkdir(parents=True, exist_ok=True)
    layout.path('logs', 'rabbitmq').mkdir(parents=True, exist_ok=True)
    write(base / 'rabbitmq-env.conf', '')
    write(base / 'enabled_plugins', '[].\n')
    write(base / 'rabbitmq.conf', '\n'.join([
        'listeners.tcp.default = %s:%d' % (layout.HOST,
                                           layout.PORTS['rabbitmq']),
        'loopback_users.guest = false',
        'default_user = %s' % creds['rabbit_user'],
        'default_pass = %s' % creds['rabbit_password'],
        'disk_free_limit.absolute = 50MB', '']))
    write(base / '.erlang.cookie', creds['erlang_cookie'], mode=0o400)
    env = rabbit_env()
    # Our own epmd, started first and stopped by pid: RabbitMQ would start
    # one that outlives it.
    epmd = processes.start('epmd', [
        'epmd', '-address', layout.HOST, '-port',
        str(layout.PORTS['epmd'])], env=env)
    processes.wait_for('epmd', processes.port_open(layout.PORTS['epmd']),
                       epmd)
    start_rabbit_only(env)


def start_rabbit_only(env=None):
    log = layout.path('logs', 'rabbitmq-server.log')
    proc = processes.start('rabbitmq', [
        '/usr/lib/rabbitmq/bin/rabbitmq-server'], env=env or rabbit_env(),
        log=log)
    processes.wait_for('rabbitmq', processes.port_open(
        layout.PORTS['rabbitmq']), proc, log=log)


# -- libvirt -----------------------------------------------------------------

QEMU_CONF = pathlib.Path('/etc/libvirt/qemu.conf')
#: /dev/kvm is root-only here (no udev): as its default user libvirt
#: re-probes QEMU for 48 s on every domain start.
QEMU_CONF_LINES = 'user = "+0"\ngroup = "+0"\n'
RUN_LIBVIRT = pathlib.Path('/run/libvirt')
#: Where QEMU's per-domain logs go (compiled into libvirt, not in
#: qemu.conf): what the cloud adds there moves to its own logs on down.
QEMU_LOG_DIR = pathlib.Path('/var/log/libvirt/qemu')
QEMU_LOGS_BEFORE = 'qemu-logs-before.json'


def backup_dir():
    return layout.path('backup')


def start_libvirt():
    backup = backup_dir()
    backup.mkdir(parents=True, exist_ok=True)
    if not (backup / 'qemu.conf').exists() and \
            not (backup / 'qemu.conf.absent').exists():
        if QEMU_CONF.exists():
            shutil.copy2(QEMU_CONF, backup / 'qemu.conf')
        else:
            write(backup / 'qemu.conf.absent', '')
        if not RUN_LIBVIRT.exists():
            write(backup / 'run-libvirt.absent', '')
    if not (backup / QEMU_LOGS_BEFORE).exists():
        write(backup / QEMU_LOGS_BEFORE, json.dumps(
            sorted(p.name for p in QEMU_LOG_DIR.glob('*'))
            if QEMU_LOG_DIR.is_dir() else None))
    original = (backup / 'qemu.conf').read_text() if (
        backup / 'qemu.conf').exists() else ''
    QEMU_CONF.parent.mkdir(parents=True, exist_ok=True)
    QEMU_CONF.write_text(original + '\n# gate_cloud (restored on down)\n'
                         + QEMU_CONF_LINES)
    run = layout.path('libvirt', 'run')
    run.mkdir(parents=True, exist_ok=True)
    conf = write(layout.path('libvirt', 'libvirtd.conf'), '\n'.join([
        'unix_sock_dir = "%s"' % run,
        'unix_sock_rw_perms = "0700"',
        'auth_unix_rw = "none"',
        'auth_unix_ro = "none"',
        'log_outputs = "3:file:%s"' % layout.path('logs', 'libvirtd-app.log'),
        '']))
    logd = processes.start('virtlogd', ['/usr/sbin/virtlogd'])
    processes.wait_for('virtlogd', lambda: pathlib.Path(
        '/run/libvirt/virtlogd-sock').exists(), logd)
    proc = processes.start('libvirtd', [
        '/usr/sbin/libvirtd', '-f', str(conf), '-p',
        str(layout.path('libvirt', 'libvirtd.pid'))])
    processes.wait_for('libvirtd', lambda: (run / 'libvirt-sock').exists(),
                       proc, log=layout.path('logs', 'libvirtd.log'))


def destroy_domains():
    """Domains Nova left behind (nova-compute refuses to start beside
    domains it does not know)."""
    uri = 'qemu+unix:///system?socket=%s' % layout.path('libvirt', 'run',
                                                        'libvirt-sock')
    if not layout.path('libvirt', 'run', 'libvirt-sock').exists():
        return
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


# -- WSGI services under gunicorn --------------------------------------------

WSGI_APPS = {
    'keystone': ('keystone.wsgi.api:application', 'OS_KEYSTONE_CONFIG_DIR'),
    'placement': ('placement.wsgi.api:application',
                  'OS_PLACEMENT_CONFIG_DIR'),
    'glance': ('glance.wsgi.api:application', 'OS_GLANCE_CONFIG_DIR'),
    'nova-api': ('nova.wsgi.osapi_compute:application',
                 'OS_NOVA_CONFIG_DIR'),
}
ACCESS_FORMAT = '%(t)s "%(r)s" %(s)s %(L)s "%(a)s"'


def start_wsgi(name, config_dir, workers=2, worker_class='sync'):
    module, env_name = WSGI_APPS[name]
    env = layout.env_for_services()
    env['GATE_WSGI_APP'] = module
    env[env_name] = str(config_dir)
    log = layout.path('logs', name + '.log')
    proc = processes.start(name, [
        layout.venv_bin('gunicorn'), '--bind',
        '%s:%d' % (layout.HOST, layout.PORTS[name]),
        '--workers', str(workers), '--worker-class', worker_class,
        '--threads', '4' if worker_class == 'gthread' else '1',
        '--timeout', '180', '--graceful-timeout', '5',
        '--access-logfile', str(layout.path('logs', name + '-access.log')),
        '--access-logformat', ACCESS_FORMAT,
        '--chdir', str(layout.REPO), 'gate_cloud.wsgi:application'],
        env=env, log=log)
    return proc, log


def wait_wsgi(name, proc, log, path=''):
    processes.wait_for(name, processes.http_ok(
        layout.url(name, path)), proc, log=log)


def start_network_standin():
    proc = processes.start('network-standin', [
        layout.venv_bin('python'), '-m', 'gate_cloud.network_standin',
        str(layout.PORTS['network-standin'])])
    processes.wait_for('network-standin', processes.http_ok(
        layout.url('network-standin', '/v2.0/ports')), proc)


# -- Nova's processes ---------------------------------------------------------

def nova_conf_path(name):
    return layout.path('nova', name + '.conf')


def write_conf(path, sections):
    return write(path, configs.render(sections))


def start_nova_service(name, binary, conf):
    log = layout.path('logs', name + '.log')
    proc = processes.start(name, [layout.venv_bin(binary),
                                  '--config-file', str(conf)], log=log)
    return proc, log
