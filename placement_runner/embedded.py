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
points it at an existing MySQL or PostgreSQL database. ``tls=TLS(...)``
serves HTTPS through gunicorn, and may require client certificates; its
``adapter()``, ``connection()`` and ``nova_conf_section()`` then carry the
CA bundle and the client certificate.
"""

import dataclasses
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
import placement_runner
from placement_runner import lifetime
from placement_runner import patched
from placement_runner import server as embedded_server

LOG = logging.getLogger(__name__)

TOKEN = 'admin'  # noqa: S105 - noauth2's user "admin", not a secret
#: How long the server has to stop, and then what it left behind.
STOP_TIMEOUT = 20
#: Seconds to wait for a database given by URL to answer.
DATABASE_CONNECT_TIMEOUT = 10


class EmbeddedPlacementError(exceptions.Error, RuntimeError):
    """The embedded Placement could not be started."""


class EmbeddedPlacementUsageError(EmbeddedPlacementError):
    """Arguments that cannot work; nothing was started."""

    exit_code = 2


def _database_url(url):
    """The parsed SQLAlchemy URL; a usage error naming what is wrong,
    with any password masked."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy.engine import url as sa_url

    try:
        parsed = sa_url.make_url(url)
    except (sa_exc.ArgumentError, ValueError):
        raise EmbeddedPlacementUsageError(
            'the database URL is not a SQLAlchemy URL '
            '(dialect+driver://user:password@host/database)') from None
    return parsed


def _shown(parsed):
    return parsed.render_as_string(hide_password=True)


def _without(text, parsed):
    """``text`` on one line, with the URL's password, if any, masked."""
    text = ' '.join(str(text).split())
    if parsed.password:
        text = text.replace(str(parsed.password), '***')
    return text


def check_database_url(url):
    """Refuse a URL no database could answer (unparsable, unknown dialect,
    driver not installed) in one line, before anything starts."""
    parsed = _database_url(url)
    if parsed.get_backend_name() == 'sqlite':
        return
    try:
        parsed.get_dialect().import_dbapi()
    except Exception as exc:  # NoSuchModuleError, ImportError
        raise EmbeddedPlacementUsageError(
            'database URL %s: %s' % (_shown(parsed), _without(
                getattr(exc, 'msg', None) or exc, parsed))) from None


def check_database_reachable(url):
    """One connection, with a timeout: a database that is down or refuses
    us is one line naming it (the password masked), not a server's log."""
    parsed = _database_url(url)
    if parsed.get_backend_name() == 'sqlite':
        return
    import sqlalchemy
    from sqlalchemy import exc as sa_exc

    timeout_arg = {'psycopg2': 'connect_timeout', 'pymysql':
                   'connect_timeout', 'mysqldb': 'connect_timeout'}.get(
                       parsed.get_driver_name())
    engine = sqlalchemy.create_engine(
        parsed, poolclass=sqlalchemy.pool.NullPool,
        connect_args={timeout_arg: DATABASE_CONNECT_TIMEOUT}
        if timeout_arg else {})
    try:
        with engine.connect():
            pass
    except sa_exc.DBAPIError as exc:
        detail = str(exc.orig).strip().splitlines() or [type(exc.orig)]
        raise EmbeddedPlacementError(
            'cannot connect to the database %s: %s'
            % (_shown(parsed), _without(detail[0], parsed))) from None
    finally:
        engine.dispose()


@dataclasses.dataclass(frozen=True)
class TLS:
    """HTTPS for an EmbeddedPlacement (PEM files): the server's certificate
    and key and the CA bundle a client verifies them with; with
    ``client_ca`` the server requires a client certificate that CA signed,
    and the embedded server's own clients send ``client_certfile`` and
    ``client_keyfile``."""

    certfile: str
    keyfile: str
    cafile: str
    client_ca: str = None
    client_certfile: str = None
    client_keyfile: str = None

    def server_arguments(self):
        found = ['--tls-certfile', self.certfile,
                 '--tls-keyfile', self.keyfile]
        if self.client_ca:
            found += ['--tls-client-ca', self.client_ca]
        return found

    @property
    def client_cert(self):
        """What requests and keystoneauth1 take as ``cert``."""
        if self.client_certfile:
            return (self.client_certfile, self.client_keyfile)
        return None


class EmbeddedPlacement:
    """A real Placement server in a child process, for one ``with`` block."""

    BACKENDS = ('sqlite', 'postgresql')

    def __init__(self, startup_timeout=120.0, database_url=None, port=0,
                 backend='sqlite', workers=None, options=(), env=None,
                 patch=None, tls=None):
        """``database_url`` and ``port`` let a test restart a server in place
        (same data, same address); by default both are fresh. ``options``
        are ``SECTION.KEY=VALUE`` strings for the generated placement.conf.
        ``env`` adds variables to the server's environment (e.g. a
        ``PYTHONPATH`` with a patched ``placement`` package first).
        ``patch``: serve Placement with this patch applied (a name from
        ``patched.PATCHES`` or a file), from a cached patched copy.
        ``tls``: a ``TLS``, to serve HTTPS (through gunicorn).
        """
        if backend not in self.BACKENDS:
            raise EmbeddedPlacementUsageError(
                'unknown Placement backend %r; choose from %s'
                % (backend, ', '.join(self.BACKENDS)))
        problem = embedded_server.workers_range_problem(workers)
        if problem:
            raise EmbeddedPlacementUsageError(problem)
        if database_url:
            check_database_url(database_url)
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
        self.tls = tls
        self.workdir = None
        self.process = None
        self._tree = None
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
                'openstack-placement is not installed; it comes with the '
                'demo distribution: pip install "%s" (./demo in the '
                'repository)' % placement_runner.DISTRIBUTION)
        missing = [name for name in self._scale_modules()
                   if importlib.util.find_spec(name) is None]
        if missing:
            raise EmbeddedPlacementError(
                '%s not installed; install the extra: pip install "%s[%s]"'
                % (', '.join(missing), placement_runner.DISTRIBUTION,
                   placement_runner.SCALE_EXTRA))
        if self.database_url:
            check_database_reachable(self.database_url)
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
        if self.tls:
            command += self.tls.server_arguments()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True, env=env)
        try:
            deadline = time.monotonic() + self.startup_timeout
            self.workdir = self._read_line('WORKDIR', deadline)
            port = int(self._read_line('READY', deadline))
            self.endpoint = '%s://127.0.0.1:%d' % (
                'https' if self.tls else 'http', port)
            self._wait_ready(deadline)
            # What it started, known now: if the server is killed outright
            # its children are orphans no longer found through it.
            self._tree = lifetime.open_pidfds(
                lifetime.descendants(self.process.pid))
        except BaseException:
            self.stop()
            raise
        LOG.debug('embedded Placement pid %s at %s', self.pid, self.endpoint)

    def _scale_modules(self):
        """What serving beyond SQLite needs, importable by the child."""
        if self.tls:
            return ['gunicorn']
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
                if requests.get(self.endpoint + '/', timeout=2,
                                **self._requests_tls()).ok:
                    return
            except requests.RequestException:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise EmbeddedPlacementError('Placement did not answer GET / with 200')

    def stop(self):
        """Stop the server and everything it started (gunicorn, its
        workers, PostgreSQL), by pid, and remove their directories.
        Idempotent.

        A signal's exception (KeyboardInterrupt, the CLI's Stopping) that
        arrives while it stops does not cut the stop short: it is raised
        once everything is gone.
        """
        pending = None
        while True:
            try:
                self._stop()
                break
            except Exception:
                raise
            except BaseException as exc:  # a second Ctrl-C, a SIGTERM
                pending = pending or exc
        if pending is not None:
            raise pending

    def _stop(self):
        """One go at stopping; resumes where an interrupted one left off."""
        process = self.process
        if process is not None:
            # Before the server goes, while its descendants are found
            # through it (and those known since start-up). Pidfds: a reused
            # pid is never signalled.
            tree = self._tree if self._tree is not None else {}
            tree.update(lifetime.open_pidfds(
                p for p in lifetime.descendants(process.pid)
                if p not in tree))
            self._tree = tree
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            # Whatever the server could not stop (killed, or timed out):
            # a little while for it to go, then SIGKILL, by pidfd.
            lifetime.end_processes(self._tree, STOP_TIMEOUT)
            self._tree = None
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe:
                    pipe.close()
            self.process = None
        # The server removes its directories as it stops; this is only for
        # one that had to be killed.
        if self.workdir:
            marker = os.path.join(self.workdir,
                                  embedded_server.POSTGRES_DIR_NAME)
            try:
                with open(marker) as f:
                    shutil.rmtree(f.read().strip(), ignore_errors=True)
            except OSError:
                pass
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

    def _requests_tls(self):
        """``verify`` and ``cert`` for requests and keystoneauth1."""
        if not self.tls:
            return {}
        return {'verify': self.tls.cafile, 'cert': self.tls.client_cert}

    def adapter(self):
        """A keystoneauth1 Adapter authenticated with ``admin_token``."""
        from keystoneauth1 import adapter
        from keystoneauth1 import session
        from keystoneauth1 import token_endpoint

        auth = token_endpoint.Token(self.endpoint, self.token)
        return adapter.Adapter(session.Session(auth=auth,
                                               **self._requests_tls()),
                               service_type='placement')

    def client(self):
        return placement_client.PlacementClient(self.adapter())

    def connection(self):
        """An openstacksdk Connection to this Placement."""
        import openstack

        tls = {}
        if self.tls:
            tls = {'cacert': self.tls.cafile, 'cert': self.tls.client_certfile,
                   'key': self.tls.client_keyfile}
        return openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': self.endpoint, 'token': self.token},
            placement_api_version=self.microversion,
            **{k: v for k, v in tls.items() if v})

    def nova_conf_section(self):
        """The ``[placement]`` section a nova.conf needs to reach it."""
        section = ('[placement]\nauth_type = admin_token\nendpoint = %s\n'
                   'token = %s\n' % (self.endpoint, self.token))
        return section + self.nova_conf_tls()

    def nova_conf_tls(self):
        """The ``[placement]`` lines that trust it and, when it asks for
        one, send a client certificate ('' without TLS)."""
        if not self.tls:
            return ''
        lines = 'cafile = %s\n' % self.tls.cafile
        if self.tls.client_certfile:
            lines += 'certfile = %s\nkeyfile = %s\n' % (
                self.tls.client_certfile, self.tls.client_keyfile)
        return lines
