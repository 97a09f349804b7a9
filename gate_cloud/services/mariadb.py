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

"""MariaDB: a private server (own data directory, loopback, stopped by pid)
holding every service's database."""

import subprocess

from gate_cloud import layout
from gate_cloud import processes
from gate_cloud.processes import GateError

NAME = 'mariadb'
PORT = 3306
PORTS = {'mariadb': PORT}
DEBIAN = ('mariadb-server',)
PYPI = ()
NEEDS = ()


def socket_path():
    return layout.path('mariadb', 'mysqld.sock')


def data_dir():
    return layout.path('mariadb', 'data')


def db_url(name, creds):
    """SQLAlchemy's URL of database ``name`` (PyMySQL, over loopback)."""
    return 'mysql+pymysql://%s:%s@%s:%d/%s?charset=utf8' % (
        creds['db_user'], creds['db_password'], layout.HOST, PORT, name)


def bootstrap(cloud):
    """A new data directory, once; the server's own tables in it."""
    if (data_dir() / 'mysql').is_dir():
        return
    data_dir().mkdir(parents=True, exist_ok=True)
    processes.run('mariadb-install-db', [
        'mariadb-install-db', '--no-defaults', '--datadir=%s' % data_dir(),
        '--user=root', '--skip-test-db', '--skip-name-resolve'],
        timeout=300)


def start(cloud):
    log = layout.path('logs', 'mariadb.log')
    processes.start(NAME, [
        '/usr/sbin/mariadbd', '--no-defaults', '--datadir=%s' % data_dir(),
        '--socket=%s' % socket_path(), '--bind-address=%s' % layout.HOST,
        '--port=%d' % PORT, '--user=root',
        '--pid-file=%s' % layout.path('mariadb', 'mariadbd.pid'),
        '--log-error=%s' % log, '--skip-name-resolve',
        '--innodb-buffer-pool-size=64M', '--max-connections=400',
        '--innodb-flush-log-at-trx-commit=2',
        '--tmpdir=%s' % layout.path('tmp')], log=log)


def wait(cloud):
    processes.wait_for(NAME, processes.port_open(PORT),
                       processes.started(NAME),
                       log=layout.path('logs', 'mariadb.log'))


def populate(cloud):
    """The cloud's user and every service's database (``DATABASES``),
    made if missing."""
    grants = ["CREATE USER IF NOT EXISTS '{u}'@'127.0.0.1' IDENTIFIED BY "
              "'{p}';".format(u=cloud.creds['db_user'],
                              p=cloud.creds['db_password'])]
    grants += ['CREATE DATABASE IF NOT EXISTS %s CHARACTER SET utf8;' % db
               for svc in cloud.services
               for db in getattr(svc, 'DATABASES', ())]
    grants.append("GRANT ALL PRIVILEGES ON *.* TO '%s'@'127.0.0.1';"
                  % cloud.creds['db_user'])
    sql(' '.join(grants), 'creating the databases')


def stop(cloud):
    processes.stop(NAME, grace=60)


def sql(statements, what):
    """Run SQL as MariaDB's root over the private socket (stdin, so no
    password is on a command line)."""
    try:
        proc = subprocess.run(
            ['mariadb', '--no-defaults', '-S', str(socket_path()),
             '-u', 'root'], input=statements.encode(), capture_output=True,
            timeout=120)
    except subprocess.TimeoutExpired:
        raise GateError('mariadb: %s timed out' % what) from None
    if proc.returncode:
        raise GateError('mariadb: %s failed: %s' % (
            what, proc.stderr.decode(errors='replace').strip()[:200]))
