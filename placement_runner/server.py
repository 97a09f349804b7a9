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

"""A real Placement app on 127.0.0.1, in the foreground.

    python -m placement_runner.server [--port PORT]
        [--database-url URL | --postgresql | --config-dir DIR]
        [--workers N] [--option SECTION.KEY=VALUE ...] [--watch-stdin]
        [--tls-certfile FILE --tls-keyfile FILE [--tls-client-ca FILE]]

Without ``--config-dir`` it makes a private working directory of its own,
writes a keystone-less ``placement.conf`` there, and removes that
directory, and nothing else, when it stops. The database is SQLite in that
directory, a private PostgreSQL cluster there (``--postgresql``), or
``--database-url``. With ``--config-dir DIR`` it serves ``DIR/placement.conf``
as it is, adds its logs beside it, and deletes nothing.

SQLite is served the way it must be, by one thread (it wants one writer).
Any other database is served the production way: ``placement-manage db
sync`` once, then gunicorn with ``--workers`` API workers (default 4).
``--tls-certfile`` and ``--tls-keyfile`` serve HTTPS instead, through
gunicorn (one worker on SQLite); with ``--tls-client-ca`` a client must
present a certificate that CA signed.

It prints ``WORKDIR <path>`` at once and ``READY <port>`` when listening,
logs every request line to ``access.log`` before handling it, and stops on
SIGTERM or SIGINT, and with ``--watch-stdin`` (what EmbeddedPlacement
uses) also when its standard input closes, so a killed caller leaves
nothing behind. Whatever it started (gunicorn, PostgreSQL) is stopped by
pid before it exits, and dies with it if it is killed outright.
"""

import argparse
import collections
import configparser
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import traceback
from wsgiref import simple_server

from placement_runner import access_log
from placement_runner import lifetime
from placement_runner import postgres

LOOPBACK = '127.0.0.1'
CONF_NAME = 'placement.conf'
LOG_NAME = 'placement.log'
ACCESS_LOG_NAME = 'access.log'
DATABASE_URL_ENV = 'EMBEDDED_PLACEMENT_DATABASE_URL'
DEFAULT_WORKERS = 4
#: More API workers than this is a typo, not a test (each is a Placement).
MAX_WORKERS = 64
#: Where the server writes its PostgreSQL cluster's directory, which lives
#: outside the working directory when PostgreSQL runs as another user.
POSTGRES_DIR_NAME = 'postgres.dir'
#: Long enough for a 10,000-host allocation-candidates query under load.
WORKER_TIMEOUT = 600


def placement_conf(database_url, sync_on_startup=True, options=()):
    """A keystone-less placement.conf; ``options`` are (section, key,
    value) triples on top."""
    conf = configparser.ConfigParser(interpolation=None)
    conf.read_dict({
        'DEFAULT': {'debug': 'False'},
        'api': {'auth_strategy': 'noauth2'},
        # Literally: oslo.config reads "$name" as a substitution, and a
        # password may hold a "$"; "$$" is its escape for one.
        'placement_database': {'connection': database_url.replace('$', '$$'),
                               'sync_on_startup': str(sync_on_startup)},
    })
    for section, key, value in options:
        if section != 'DEFAULT' and not conf.has_section(section):
            conf.add_section(section)
        conf.set(section, key, value)
    lines = []
    for section in ['DEFAULT'] + conf.sections():
        lines.append('[%s]' % section)
        items = (conf.defaults() if section == 'DEFAULT'
                 else {k: v for k, v in conf.items(section)
                       if k not in conf.defaults()})
        lines += ['%s = %s' % kv for kv in items.items()]
    return '\n'.join(lines) + '\n'


def is_sqlite(database_url):
    return database_url.split(':', 1)[0].split('+', 1)[0] == 'sqlite'


def log_tail(path, lines=20):
    """The last lines of a log file, or '' when there is none."""
    try:
        with open(path, errors='replace') as f:
            return ''.join(collections.deque(f, maxlen=lines)).rstrip()
    except OSError:
        return ''


class UsageError(Exception):
    """Bad arguments: one line on stderr, exit 2, nothing created."""


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


class _Server(simple_server.WSGIServer):
    # socketserver's default queue of 5 resets connections when many
    # clients connect at once (a start-up storm); the kernel's limit
    # lets them wait their turn instead.
    request_queue_size = socket.SOMAXCONN


def _option(text):
    name, sep, value = text.partition('=')
    section, dot, key = name.partition('.')
    if not (sep and dot and section and key):
        raise argparse.ArgumentTypeError(
            'expected SECTION.KEY=VALUE, got %r' % text)
    return section, key, value


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog='python -m placement_runner.server',
        description='Serve a real Placement on 127.0.0.1.')
    parser.add_argument('--port', type=int, default=0,
                        help='port on 127.0.0.1 (default: a free one)')
    source = parser.add_mutually_exclusive_group()
    source.add_argument('--database-url', metavar='URL',
                        default=os.environ.get(DATABASE_URL_ENV),
                        help='database of the generated placement.conf '
                             '(default: $%s, else SQLite in the working '
                             'directory); the variable keeps a password off '
                             'the process list' % DATABASE_URL_ENV)
    source.add_argument('--postgresql', action='store_true',
                        help='a private PostgreSQL cluster in the working '
                             'directory (needs the scale extra)')
    source.add_argument('--config-dir', metavar='DIR',
                        help='serve DIR/placement.conf; nothing is deleted')
    parser.add_argument('--workers', type=int,
                        help='gunicorn API workers for a database other '
                             'than SQLite (default %d)' % DEFAULT_WORKERS)
    parser.add_argument('--option', type=_option, action='append',
                        default=[], metavar='SECTION.KEY=VALUE',
                        help='set in the generated placement.conf')
    parser.add_argument('--watch-stdin', action='store_true',
                        help='stop when standard input closes')
    parser.add_argument('--tls-certfile', metavar='FILE',
                        help='serve HTTPS with this certificate (PEM), '
                             'through gunicorn')
    parser.add_argument('--tls-keyfile', metavar='FILE',
                        help='the private key of --tls-certfile (PEM)')
    parser.add_argument('--tls-client-ca', metavar='FILE',
                        help='require a client certificate signed by this '
                             'CA (PEM)')
    args = parser.parse_args(argv)
    if bool(args.tls_certfile) != bool(args.tls_keyfile):
        raise UsageError('--tls-certfile and --tls-keyfile go together')
    if args.tls_client_ca and not args.tls_certfile:
        raise UsageError('--tls-client-ca needs --tls-certfile')
    if not 0 <= args.port <= 65535:
        raise UsageError('--port must be between 0 and 65535')
    if args.config_dir is not None:
        if args.option:
            raise UsageError('--option edits the generated placement.conf; '
                             'with --config-dir edit yours')
        if not os.path.isfile(os.path.join(args.config_dir, CONF_NAME)):
            raise UsageError('%s has no %s' % (args.config_dir, CONF_NAME))
    problem = workers_range_problem(args.workers)
    if problem:
        raise UsageError('--' + problem)
    args.sqlite = _sqlite_source(args)
    problem = workers_problem(args.sqlite, args.workers)
    if problem:
        raise UsageError(problem)
    return args


def workers_range_problem(workers):
    """Why ``workers`` is out of range, or None."""
    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        return 'workers must be from 1 to %d, not %d' % (MAX_WORKERS,
                                                        workers)
    return None


def workers_problem(sqlite, workers):
    """Why ``workers`` cannot serve this database, or None."""
    if sqlite and (workers or 1) > 1:
        return ('SQLite is served by one thread; %d workers need PostgreSQL '
                'or MySQL (the postgresql backend or a database URL)'
                % workers)
    return None


def _sqlite_source(args):
    if args.postgresql:
        return False
    if args.config_dir is not None:
        conf = configparser.ConfigParser(interpolation=None)
        conf.read(os.path.join(args.config_dir, CONF_NAME))
        return is_sqlite(conf.get('placement_database', 'connection',
                                  fallback='sqlite://'))
    return args.database_url is None or is_sqlite(args.database_url)


class Cleanup:
    """Stops what the server started, newest first, once, from any thread
    (the main one, or the one watching stdin)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._callbacks = []
        self.done = False

    def push(self, callback):
        """Run ``callback`` at clean-up; if that already ran, run it now
        and unwind."""
        with self._lock:
            if not self.done:
                self._callbacks.append(callback)
                return
        callback()
        raise SystemExit(0)

    def run(self):
        with self._lock:
            self.done = True
            while self._callbacks:
                try:
                    self._callbacks.pop()()
                except Exception:
                    traceback.print_exc()


class Workdir:
    """Where the server keeps its files; removed at the end only if ours."""

    def __init__(self, config_dir, cleanup):
        self.owned = config_dir is None
        if self.owned:
            self.path = tempfile.mkdtemp(prefix='embedded-placement-')
            cleanup.push(lambda: shutil.rmtree(self.path, ignore_errors=True))
        else:
            self.path = os.path.abspath(config_dir)

    def file(self, name):
        return os.path.join(self.path, name)

    def write_conf(self, database_url, sync_on_startup, options):
        # It may hold a password: only we read it (umask 077 besides).
        fd = os.open(self.file(CONF_NAME),
                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, 'w') as f:
            f.write(placement_conf(database_url, sync_on_startup, options))


def _stop_when_stdin_closes(cleanup):
    try:
        while os.read(0, 4096):
            pass
    finally:
        cleanup.run()
        os._exit(0)


def serve_one_thread(args, workdir, started):
    """SQLite: Placement in this process, one wsgiref thread."""
    from placement.wsgi import api  # loads config, syncs the schema: ~2 s
    app = access_log.logged(api.application, workdir.file(ACCESS_LOG_NAME))
    server = simple_server.make_server(LOOPBACK, args.port, app,
                                       server_class=_Server,
                                       handler_class=_QuietHandler)
    # Not an exception: wsgiref's handler catches everything (a bare
    # except) while it finishes a response, and would swallow it.
    started(server.server_port, lambda: threading.Thread(
        target=server.shutdown, daemon=True).start())
    try:
        server.serve_forever()
    finally:
        server.server_close()


def _run_logged(command, log_path, env):
    with open(log_path, 'ab') as log:
        code = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=log,
                              stderr=log, env=env).returncode
    if code:
        raise RuntimeError('%s exited with code %d' % (command[2], code))


def serve_gunicorn(args, workdir, started, cleanup):
    """Any other database: schema once, then gunicorn's workers."""
    env = dict(os.environ, OS_PLACEMENT_CONFIG_DIR=workdir.path)
    env[access_log.ENVIRON_KEY] = workdir.file(ACCESS_LOG_NAME)
    # Once, before the workers: they would race each other on the schema.
    _run_logged([sys.executable, '-c',
                 'from placement.cmd import manage; manage.main()',
                 '--config-file', workdir.file(CONF_NAME), 'db', 'sync'],
                workdir.file(LOG_NAME), env)
    listener = socket.create_server((LOOPBACK, args.port),
                                    backlog=socket.SOMAXCONN)
    workers = args.workers or (1 if args.sqlite else DEFAULT_WORKERS)
    with open(workdir.file(LOG_NAME), 'ab') as log:
        gunicorn = subprocess.Popen(
            [sys.executable, '-m', 'gunicorn',
             '--workers', str(workers),
             '--bind', 'fd://%d' % listener.fileno(),
             '--backlog', str(socket.SOMAXCONN),
             '--timeout', str(WORKER_TIMEOUT), '--graceful-timeout', '5',
             *tls_arguments(args),
             'placement_runner.wsgi_app:application'],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
            pass_fds=(listener.fileno(),), start_new_session=True,
            preexec_fn=lifetime.die_with_parent(signal.SIGTERM))
    stopping = threading.Event()

    def stop_gunicorn():
        if gunicorn.poll() is None:
            gunicorn.terminate()
            try:
                gunicorn.wait(30)
            except subprocess.TimeoutExpired:
                gunicorn.kill()
                gunicorn.wait()

    cleanup.push(stop_gunicorn)
    port = listener.getsockname()[1]
    listener.close()  # gunicorn holds it now

    def stop():
        stopping.set()
        gunicorn.terminate()

    started(port, stop)
    code = gunicorn.wait()
    if not stopping.is_set():
        raise RuntimeError('gunicorn exited with code %d' % code)


def tls_arguments(args):
    """gunicorn's options for HTTPS, if asked for."""
    if not args.tls_certfile:
        return []
    found = ['--certfile', args.tls_certfile, '--keyfile', args.tls_keyfile]
    if args.tls_client_ca:
        found += ['--ca-certs', args.tls_client_ca,
                  '--cert-reqs', str(int(ssl.CERT_REQUIRED))]
    return found


def serve(args, workdir, cleanup, started):
    """Set up the database, load Placement and serve until stopped;
    ``started(port, stop)`` is called once it listens."""
    # Placement logs to stdout and stderr: both go to the log file from
    # here on, and only the protocol lines reach the caller's stdout.
    protocol = os.fdopen(os.dup(1), 'w', buffering=1)
    log_fd = os.open(workdir.file(LOG_NAME),
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    if args.watch_stdin:
        threading.Thread(target=_stop_when_stdin_closes, args=(cleanup,),
                         daemon=True).start()

    def listening(port, stop):
        started(port, stop)
        protocol.write('READY %d\n' % port)
        protocol.close()  # nobody need read the caller's stdout any more

    os.environ['OS_PLACEMENT_CONFIG_DIR'] = workdir.path
    if args.config_dir is None:
        database_url = args.database_url
        if args.postgresql:
            server = postgres.PrivatePostgres(
                workdir.path, marker=workdir.file(POSTGRES_DIR_NAME))
            cleanup.push(server.stop)
            database_url = server.start()
        database_url = database_url or (
            'sqlite:///' + workdir.file('placement.db'))
        workdir.write_conf(database_url, is_sqlite(database_url),
                           args.option)
    if args.sqlite and not args.tls_certfile:
        serve_one_thread(args, workdir, listening)
    else:
        serve_gunicorn(args, workdir, listening, cleanup)


def main(argv):
    """Run until stopped; returns the exit code."""
    try:
        args = parse_args(argv)
    except UsageError as exc:
        print('embedded_server: error: %s' % exc, file=sys.stderr)
        return 2
    # What we create (placement.conf with its database URL, the logs) is
    # for us alone; gunicorn and its workers inherit this.
    os.umask(0o077)
    lifetime.become_subreaper()
    original_stderr = os.dup(2)
    cleanup = Cleanup()
    workdir = Workdir(args.config_dir, cleanup)
    # Newest first: this runs after everything else is stopped, before the
    # directory goes, and stops whatever our children left behind.
    cleanup.push(lifetime.end_children)
    print('WORKDIR %s' % workdir.path, flush=True)
    running = {}

    def stop(*_):
        if running.get('stopping'):
            return  # a second signal: the first one's stop is under way
        running['stopping'] = True
        if 'stop' not in running:
            raise SystemExit(0)  # still setting up: unwind
        running['stop']()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    code = 0
    try:
        serve(args, workdir, cleanup,
              lambda port, stopper: running.update(stop=stopper))
    except SystemExit as exc:
        code = exc.code or 0
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        # The log goes with the directory: hand its tail to whoever waits.
        os.write(original_stderr,
                 log_tail(workdir.file(LOG_NAME)).encode() + b'\n')
        code = 1
    finally:
        running['stopping'] = True  # a signal now must not cut clean-up
        cleanup.run()
    return code


if __name__ == '__main__':
    exit_code = main(sys.argv[1:])
    sys.stderr.flush()
    # Leave at once: the stdin watcher thread must not block interpreter exit.
    os._exit(exit_code)
