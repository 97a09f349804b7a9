"""A private PostgreSQL server for the embedded Placement's scale backend.

It runs the PostgreSQL binaries that the ``pgserver`` wheel ships (so it
installs from pip alone) as a child process of ours: a fresh cluster in a
directory we are given, listening on a Unix socket only (no TCP port, so
nothing to collide with), stopped by its own pid.

PostgreSQL refuses to run as root; as root it runs as ``nobody``. When
``nobody`` cannot reach the wheel's binaries (a virtualenv under a private
home), they are copied next to the cluster rather than loosening any
directory's permissions.
"""

import importlib.util
import logging
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

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
            'the PostgreSQL backend needs the scale extra: '
            'pip install "image-type-filter[scale]"')
    return install


class PrivatePostgres:
    """``start()`` returns a SQLAlchemy URL; ``stop()`` stops it by pid."""

    def __init__(self, parent_dir, max_connections=200):
        self.parent_dir = parent_dir
        self._own_parent = False
        self.max_connections = max_connections
        self.data_dir = os.path.join(parent_dir, 'pgdata')
        self.log_path = os.path.join(parent_dir, 'postgres.log')
        self.socket_dir = None
        self._own_socket_dir = False
        self.process = None
        self.user = None
        self.install = None

    @property
    def url(self):
        return 'postgresql+psycopg2://%s@/%s?host=%s' % (
            SUPERUSER, DATABASE, self.socket_dir)

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
                timeout=120, **self._run_kwargs()).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, 'stderr', None) or str(exc)
            raise PostgresError('%s failed: %s' % (
                what, detail.strip().splitlines()[-1] if detail.strip()
                else exc)) from None

    def _prepare_user(self):
        """Who runs PostgreSQL, and binaries that user can execute."""
        self.install = _binaries()
        if os.geteuid() != 0:
            return
        self.user = pwd.getpwnam(UNPRIVILEGED_USER)
        if not _others_can_traverse(os.path.dirname(
                os.path.abspath(self.parent_dir))):
            # Under a private directory (pytest's, a 0700 home): a place
            # of its own instead, removed at stop, rather than loosening
            # directories that are not ours.
            self.parent_dir = tempfile.mkdtemp(prefix='embedded-postgres-',
                                               dir='/tmp')
            self._own_parent = True
            self.data_dir = os.path.join(self.parent_dir, 'pgdata')
        # The cluster's parent must be traversable, not readable, by it.
        os.chmod(self.parent_dir, 0o711)  # noqa: S103 - traverse only
        try:
            self._check_output([self._tool('postgres'), '--version'],
                               'postgres --version')
        except PostgresError:
            self.install = self._copy_for_unprivileged_user()

    def _copy_for_unprivileged_user(self):
        """The wheel's install and the libraries its RPATH names
        (``$ORIGIN/../../../pgserver.libs``), copied as they lie."""
        package = os.path.dirname(self.install)
        copy = os.path.join(self.parent_dir, 'pg-binaries')
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
                    mode = os.stat(path).st_mode | 0o055  # for nobody
                    os.chmod(path, mode)  # noqa: S103 - our own copy
        return install

    def _prepare_socket_dir(self):
        candidate = self.data_dir
        if len(os.path.join(candidate, '.s.PGSQL.5432')) > _SOCKET_PATH_LIMIT:
            candidate = tempfile.mkdtemp(prefix='pg-', dir='/tmp')
            self._own_socket_dir = True
            if self.user is not None:
                os.chown(candidate, self.user.pw_uid, self.user.pw_gid)
        self.socket_dir = candidate

    def start(self, timeout=60.0):
        self._prepare_user()
        os.mkdir(self.data_dir, 0o700)
        if self.user is not None:
            os.chown(self.data_dir, self.user.pw_uid, self.user.pw_gid)
        self._check_output(
            [self._tool('initdb'), '-D', self.data_dir, '-U', SUPERUSER,
             '--auth=trust', '--encoding=UTF8', '--no-sync'], 'initdb')
        self._prepare_socket_dir()
        log = open(self.log_path, 'ab')
        try:
            self.process = subprocess.Popen(
                [self._tool('postgres'), '-D', self.data_dir,
                 '-k', self.socket_dir, '-h', '',
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
        self._check_output(
            [self._tool('createdb'), '-h', self.socket_dir, '-U', SUPERUSER,
             DATABASE], 'createdb')
        LOG.debug('PostgreSQL pid %s on %s', self.process.pid,
                  self.socket_dir)
        return self.url

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
        except OSError:
            return '(no log)'

    def stop(self, timeout=30.0):
        """Fast shutdown (SIGINT) by pid, then SIGKILL. Idempotent."""
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
        if self._own_parent:
            self._own_parent = False
            shutil.rmtree(self.parent_dir, ignore_errors=True)


def _others_can_traverse(path):
    """Whether every directory from / down to ``path`` lets others in."""
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent
