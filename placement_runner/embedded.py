"""A real OpenStack Placement on 127.0.0.1 for the demo, tests and benchmarks.

``with EmbeddedPlacement() as placement:`` starts the ``openstack-placement``
WSGI app in a child process (``embedded_server``) on a free loopback port,
with a fresh SQLite database and ``auth_strategy = noauth2`` in a private
(0700) directory the child creates, and returns once ``GET /`` answers 200.
Leaving the block stops the child by its pid, and the child removes its own
directory; if the caller dies instead, the child notices its stdin close and
cleans up by itself.

``EmbeddedPlacement(backend='postgresql', workers=4)`` runs it the way
production does instead: a private PostgreSQL cluster in that directory and
gunicorn with that many API workers (the ``scale`` extra); ``database_url``
points it at an existing MySQL or PostgreSQL database.
"""

import importlib.util
import logging
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time

import requests

from image_type_common import exceptions
from image_type_common import placement_client
from placement_runner import patched
from placement_runner import server as embedded_server

LOG = logging.getLogger(__name__)

TOKEN = 'admin'  # noqa: S105 - noauth2's user "admin", not a secret


class EmbeddedPlacementError(exceptions.Error, RuntimeError):
    """The embedded Placement could not be started."""


class EmbeddedPlacementUsageError(EmbeddedPlacementError):
    """Arguments that cannot work; nothing was started."""

    exit_code = 2


class EmbeddedPlacement:
    """A real Placement server in a child process, for one ``with`` block."""

    BACKENDS = ('sqlite', 'postgresql')

    def __init__(self, startup_timeout=120.0, database_url=None, port=0,
                 backend='sqlite', workers=None, options=(), env=None,
                 patch=None):
        """``database_url`` and ``port`` let a test restart a server in place
        (same data, same address); by default both are fresh. ``options``
        are ``SECTION.KEY=VALUE`` strings for the generated placement.conf.
        ``env`` adds variables to the server's environment (e.g. a
        ``PYTHONPATH`` with a patched ``placement`` package first).
        ``patch``: serve Placement with this patch applied (a name from
        ``patched.PATCHES`` or a file), from a cached patched copy.
        """
        if backend not in self.BACKENDS:
            raise EmbeddedPlacementUsageError(
                'unknown Placement backend %r; choose from %s'
                % (backend, ', '.join(self.BACKENDS)))
        if workers is not None and workers < 1:
            raise EmbeddedPlacementUsageError('workers must be at least 1')
        problem = embedded_server.workers_problem(
            embedded_server.is_sqlite(database_url) if database_url
            else backend == 'sqlite', workers)
        if problem:
            raise EmbeddedPlacementUsageError(problem)
        self.startup_timeout = startup_timeout
        self.database_url = database_url
        self.port = port
        self.backend = backend
        self.workers = workers
        self.options = tuple(options)
        self.env = dict(env or {})
        self.patch = patch
        self.workdir = None
        self.process = None
        self.endpoint = None
        self.token = TOKEN
        self.microversion = placement_client.version_str(
            placement_client.MAX_MICROVERSION)

    # -- life cycle -------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()

    @property
    def pid(self):
        return self.process.pid if self.process else None

    def start(self):
        if importlib.util.find_spec('placement') is None:
            raise EmbeddedPlacementError(
                'openstack-placement is not installed; install the extra: '
                'pip install "image-type-filter[embedded]"')
        missing = [name for name in self._scale_modules()
                   if importlib.util.find_spec(name) is None]
        if missing:
            raise EmbeddedPlacementError(
                '%s not installed; install the extra: '
                'pip install "image-type-filter[scale]"' % ', '.join(missing))
        command = [sys.executable, '-m', embedded_server.__name__,
                   '--port', str(self.port), '--watch-stdin']
        env = dict(os.environ, **self.env)
        if self.patch:
            try:
                overlay = patched.patched_placement_path(
                    patched.patch_file(self.patch))
            except patched.OverlayError as exc:
                raise EmbeddedPlacementUsageError(str(exc)) from exc
            env['PYTHONPATH'] = os.pathsep.join(
                p for p in (overlay, env.get('PYTHONPATH')) if p)
        env.pop(embedded_server.DATABASE_URL_ENV, None)
        if self.database_url:
            # In the environment, not the command line: a URL may carry a
            # password, and any user can read a process's arguments.
            env[embedded_server.DATABASE_URL_ENV] = self.database_url
        elif self.backend == 'postgresql':
            command += ['--postgresql']
        if self.workers is not None:
            command += ['--workers', str(self.workers)]
        for option in self.options:
            command += ['--option', option]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True, env=env)
        try:
            deadline = time.monotonic() + self.startup_timeout
            self.workdir = self._read_line('WORKDIR', deadline)
            port = int(self._read_line('READY', deadline))
            self.endpoint = 'http://127.0.0.1:%d' % port
            self._wait_ready(deadline)
        except BaseException:
            self.stop()
            raise
        LOG.debug('embedded Placement pid %s at %s', self.pid, self.endpoint)

    def _scale_modules(self):
        """What serving beyond SQLite needs, importable by the child."""
        if self.database_url and not embedded_server.is_sqlite(
                self.database_url):
            return ['gunicorn']  # and the user's own database driver
        if self.backend == 'postgresql':
            return ['gunicorn', 'psycopg2', 'pgserver']
        return []

    def _read_line(self, word, deadline):
        """The value of the child's next ``WORD value`` line on stdout."""
        with selectors.DefaultSelector() as sel:
            sel.register(self.process.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if sel.select(timeout=0.2):
                    line = self.process.stdout.readline().decode()
                    if line.startswith(word + ' '):
                        return line.split(None, 1)[1].strip()
                    if not line:
                        break
                if self.process.poll() is not None:
                    break
        if self.process.poll() is None and time.monotonic() >= deadline:
            raise EmbeddedPlacementError(
                'Placement server did not listen within %.0f s'
                % self.startup_timeout)
        code = self.process.wait(timeout=10)  # its stdout closed: exiting
        tail = self.process.stderr.read().decode(errors='replace').strip()
        raise EmbeddedPlacementError(
            'Placement server exited with code %s during start-up; last '
            'server log lines:\n%s' % (code, tail or '(none)'))

    def _wait_ready(self, deadline):
        while time.monotonic() < deadline:
            try:
                if requests.get(self.endpoint + '/', timeout=2).ok:
                    return
            except requests.RequestException:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise EmbeddedPlacementError('Placement did not answer GET / with 200')

    def stop(self):
        """Stop the server by its pid and remove its directory. Idempotent."""
        process, self.process = self.process, None
        if process is not None:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.kill(process.pid, signal.SIGKILL)
                    process.wait()
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe:
                    pipe.close()
        # The server removes its own directory as it stops; this is only for
        # one that had to be killed.
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    # -- what a client needs ----------------------------------------------

    @property
    def log_path(self):
        return os.path.join(self.workdir, embedded_server.LOG_NAME)

    def log_tail(self, lines=20):
        return (embedded_server.log_tail(self.log_path, lines)
                or '(no server log)')

    def requests_seen(self):
        """Request lines the server has received (``METHOD /path?query``)."""
        try:
            with open(os.path.join(self.workdir,
                                   embedded_server.ACCESS_LOG_NAME)) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def adapter(self):
        """A keystoneauth1 Adapter authenticated with ``admin_token``."""
        from keystoneauth1 import adapter
        from keystoneauth1 import session
        from keystoneauth1 import token_endpoint

        auth = token_endpoint.Token(self.endpoint, self.token)
        return adapter.Adapter(session.Session(auth=auth),
                               service_type='placement')

    def client(self):
        return placement_client.PlacementClient(self.adapter())

    def connection(self):
        """An openstacksdk Connection to this Placement."""
        import openstack

        return openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': self.endpoint, 'token': self.token},
            placement_api_version=self.microversion)

    def nova_conf_section(self):
        """The ``[placement]`` section a nova.conf needs to reach it."""
        return ('[placement]\nauth_type = admin_token\nendpoint = %s\n'
                'token = %s\n' % (self.endpoint, self.token))
