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

"""A private PostgreSQL server for the embedded Placement's scale backend.

It runs the PostgreSQL binaries that the ``pgserver`` wheel ships (so it
installs from pip alone) as a child process of ours: a fresh cluster in a
private (0700) directory of its own, listening on a Unix socket only (no
TCP port, so nothing to collide with), with password authentication
(scram-sha-256, a random password per cluster), stopped by its own pid.

PostgreSQL refuses to run as root; as root it runs as ``nobody``, in a
directory ``nobody`` owns. When ``nobody`` cannot reach the wheel's
binaries (a virtualenv under a private home), they are copied into that
directory rather than loosening any directory's permissions.
"""

import importlib.util
import logging
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.parse

import placement_runner
from placement_runner import lifetime

LOG = logging.getLogger(__name__)

DATABASE = 'placement'
SUPERUSER = 'postgres'
READY_LINE = 'database system is ready to accept connections'
#: sun_path is 108 bytes on Linux; PostgreSQL's socket name is appended.
_SOCKET_PATH_LIMIT = 100
UNPRIVILEGED_USER = 'nobody'


class PostgresError(RuntimeError):
    """PostgreSQL could not be set up or started."""


def _binaries():
    """The wheel's PostgreSQL install, found without importing pgserver
    (its import sets up lock files we do not use)."""
    spec = importlib.util.find_spec('pgserver')
    install = spec and os.path.join(
        list(spec.submodule_search_locations)[0], 'pginstall')
    if not install or not os.path.isfile(os.path.join(install, 'bin',
                                                      'postgres')):
        raise PostgresError(
            'the PostgreSQL backend needs the %s extra: pip install "%s[%s]"'
            % (placement_runner.SCALE_EXTRA, placement_runner.DISTRIBUTION,
               placement_runner.SCALE_EXTRA))
    return install


class PrivatePostgres:
    """``start()`` returns a SQLAlchemy URL; ``stop()`` stops it by pid.

    Everything lives in one directory of its own (0700; the data directory
    and the Unix socket in it), made under ``parent_dir`` and removed, all
    of it, at stop. As root, where PostgreSQL runs as ``nobody``, that
    directory belongs to ``nobody`` and is made where ``nobody`` can reach
    it: ``parent_dir`` if it can, else the temporary directory, else
    ``/tmp``. Connecting takes a password (scram-sha-256) made for this
    cluster only, so another process running as ``nobody`` cannot use it;
    the password is in the returned URL and never on a command line.
    """

    def __init__(self, parent_dir=None, max_connections=200, password=None,
                 marker=None):
        """``marker``: a file to write this cluster's directory into as soon
        as it exists, so whoever has to kill us outright can remove it."""
        self.parent_dir = parent_dir
        self.max_connections = max_connections
        self.password = password or secrets.token_urlsafe(24)
        self.marker = marker
        self.root = None
        self.data_dir = None
        self.log_path = None
        self.socket_dir = None
        self._own_socket_dir = False
        self.process = None
        self.user = None
        self.install = None

    @property
    def url(self):
        return 'postgresql+psycopg2://%s:%s@/%s?host=%s' % (
            SUPERUSER, urllib.parse.quote(self.password, safe=''), DATABASE,
            self.socket_dir)

    def _run_kwargs(self):
        if self.user is None:
            return {}
        return {'user': self.user.pw_uid, 'group': self.user.pw_gid,
                'extra_groups': []}

    def _tool(self, name):
        return os.path.join(self.install, 'bin', name)

    def _check_output(self, args, what):
        try:
            return subprocess.run(
                args, check=True, capture_output=True, text=True,
                timeout=120, stdin=subprocess.DEVNULL,
                **self._run_kwargs()).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, 'stderr', None) or str(exc)
            raise PostgresError('%s failed: %s' % (
                what, detail.strip().splitlines()[-1] if detail.strip()
                else exc)) from None

    def _own(self, path):
        """``path`` belongs to whoever runs PostgreSQL."""
        if self.user is not None:
            os.chown(path, self.user.pw_uid, self.user.pw_gid)

    def _make_root(self):
        """Our own 0700 directory, in a place its owner can reach."""
        self.install = _binaries()
        candidates = [self.parent_dir or tempfile.gettempdir()]
        if os.geteuid() == 0:
            self.user = pwd.getpwnam(UNPRIVILEGED_USER)
            # nobody must reach its directory: not under a private one
            # (pytest's, a 0700 home, the embedded server's own).
            candidates = [c for c in candidates + [tempfile.gettempdir(),
                                                   '/tmp']  # noqa: S108
                          if _others_can_traverse(os.path.abspath(c))]
        self.root = tempfile.mkdtemp(prefix='embedded-postgres-',
                                     dir=candidates[0])
        if self.marker:
            with open(self.marker, 'w') as f:
                f.write(self.root)
        self._own(self.root)
        self.data_dir = os.path.join(self.root, 'pgdata')
        self.log_path = os.path.join(self.root, 'postgres.log')
        if self.user is not None:
            try:
                self._check_output([self._tool('postgres'), '--version'],
                                   'postgres --version')
            except PostgresError:
                self.install = self._copy_for_unprivileged_user()

    def _copy_for_unprivileged_user(self):
        """The wheel's install and the libraries its RPATH names
        (``$ORIGIN/../../../pgserver.libs``), copied as they lie into our
        own directory, for ``nobody`` (rather than loosening directories
        that are not ours)."""
        package = os.path.dirname(self.install)
        copy = os.path.join(self.root, 'pg-binaries')
        LOG.debug('%s cannot reach %s; using a copy in %s',
                  UNPRIVILEGED_USER, self.install, copy)
        install = os.path.join(copy, os.path.basename(package),
                               os.path.basename(self.install))
        shutil.copytree(self.install, install, symlinks=True)
        libs = package + '.libs'
        if os.path.isdir(libs):
            shutil.copytree(libs, os.path.join(copy, os.path.basename(libs)),
                            symlinks=True)
        for root, dirs, files in os.walk(copy):
            for name in dirs + files + ['.']:
                path = os.path.join(root, name)
                if not os.path.islink(path):
                    os.chown(path, self.user.pw_uid, self.user.pw_gid)
        return install

    def _prepare_socket_dir(self):
        candidate = self.root
        if len(os.path.join(candidate, '.s.PGSQL.5432')) > _SOCKET_PATH_LIMIT:
            candidate = tempfile.mkdtemp(prefix='pg-', dir='/tmp')
            self._own_socket_dir = True
            self._own(candidate)
        self.socket_dir = candidate

    def start(self, timeout=60.0):
        old_umask = os.umask(0o077)
        try:
            return self._start(timeout)
        finally:
            os.umask(old_umask)

    def _start(self, timeout):
        self._make_root()
        os.mkdir(self.data_dir, 0o700)
        self._own(self.data_dir)
        # The password reaches initdb in a file only it reads, never argv.
        pwfile = os.path.join(self.root, 'pwfile')
        with open(os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                          0o600), 'w') as f:
            f.write(self.password + '\n')
        self._own(pwfile)
        try:
            self._check_output(
                [self._tool('initdb'), '-D', self.data_dir, '-U', SUPERUSER,
                 '--auth=scram-sha-256', '--pwfile=' + pwfile,
                 '--encoding=UTF8', '--no-sync'], 'initdb')
        finally:
            os.unlink(pwfile)
        self._prepare_socket_dir()
        log = open(self.log_path, 'ab')
        try:
            self.process = subprocess.Popen(
                [self._tool('postgres'), '-D', self.data_dir,
                 '-k', self.socket_dir, '-h', '',
                 '-c', 'unix_socket_permissions=0700',
                 '-c', 'max_connections=%d' % self.max_connections],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                # Its own session: a Ctrl-C meant for us must not stop it
                # before the workers using it.
                start_new_session=True,
                preexec_fn=lifetime.die_with_parent(signal.SIGINT),
                **self._run_kwargs())
        finally:
            log.close()
        self._wait_ready(timeout)
        self._create_database()
        LOG.debug('PostgreSQL pid %s on %s', self.process.pid,
                  self.socket_dir)
        return self.url

    def _create_database(self):
        """With the password, from this process: no command line has it."""
        import psycopg2

        try:
            conn = psycopg2.connect(dbname='postgres', user=SUPERUSER,
                                    password=self.password,
                                    host=self.socket_dir, connect_timeout=30)
        except psycopg2.Error as exc:
            raise PostgresError('cannot connect to the new cluster: %s'
                                % str(exc).strip().splitlines()[0]) from None
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute('CREATE DATABASE %s' % DATABASE)
        finally:
            conn.close()

    def _wait_ready(self, timeout):
        """Until the server's log says it accepts connections."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PostgresError('postgres exited with code %s: %s' % (
                    self.process.returncode, self.log_tail()))
            with open(self.log_path, errors='replace') as f:
                if READY_LINE in f.read():
                    return
            time.sleep(0.05)
        raise PostgresError('postgres was not ready within %.0f s' % timeout)

    def log_tail(self, lines=5):
        try:
            with open(self.log_path, errors='replace') as f:
                return ' | '.join(f.read().strip().splitlines()[-lines:])
        except (OSError, TypeError):
            return '(no log)'

    def stop(self, timeout=30.0):
        """Fast shutdown (SIGINT) by pid, then SIGKILL; then remove our
        directory. Idempotent."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._own_socket_dir:
            self._own_socket_dir = False
            shutil.rmtree(self.socket_dir, ignore_errors=True)
        root, self.root = self.root, None
        if root:
            shutil.rmtree(root, ignore_errors=True)


def _others_can_traverse(path):
    """Whether every directory from / down to ``path`` lets others in."""
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent
