"""A real Placement app on 127.0.0.1, in the foreground.

    python -m image_type_filter.harness.embedded_server [--port PORT]
        [--database-url URL | --config-dir DIR] [--watch-stdin]

Without ``--config-dir`` it makes a private (0700) working directory of its
own, writes a keystone-less ``placement.conf`` there (SQLite in that
directory unless ``--database-url`` says otherwise), and removes that
directory, and nothing else, when it stops. With ``--config-dir DIR`` it
serves ``DIR/placement.conf`` as it is, adds ``placement.log`` and
``access.log`` beside it, and deletes nothing.

It prints ``WORKDIR <path>`` at once and ``READY <port>`` when listening,
serves from one thread (SQLite wants a single writer), and logs every
request line to ``access.log`` before handling it. It stops on SIGTERM or
SIGINT, and with ``--watch-stdin`` (what EmbeddedPlacement uses) also when
its standard input closes, so a killed caller leaves nothing behind.
"""

import argparse
import collections
import os
import shutil
import signal
import sys
import tempfile
import threading
import traceback
from wsgiref import simple_server

LOOPBACK = '127.0.0.1'
CONF_NAME = 'placement.conf'
LOG_NAME = 'placement.log'
ACCESS_LOG_NAME = 'access.log'
PLACEMENT_CONF = """\
[DEFAULT]
debug = False
[api]
auth_strategy = noauth2
[placement_database]
connection = {db}
sync_on_startup = True
"""


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


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog='python -m image_type_filter.harness.embedded_server',
        description='Serve a real Placement on 127.0.0.1.')
    parser.add_argument('--port', type=int, default=0,
                        help='port on 127.0.0.1 (default: a free one)')
    source = parser.add_mutually_exclusive_group()
    source.add_argument('--database-url', metavar='URL',
                        help='database of the generated placement.conf '
                             '(default: SQLite in the working directory)')
    source.add_argument('--config-dir', metavar='DIR',
                        help='serve DIR/placement.conf; nothing is deleted')
    parser.add_argument('--watch-stdin', action='store_true',
                        help='stop when standard input closes')
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        raise UsageError('--port must be between 0 and 65535')
    if args.config_dir is not None and not os.path.isfile(
            os.path.join(args.config_dir, CONF_NAME)):
        raise UsageError('%s has no %s' % (args.config_dir, CONF_NAME))
    return args


class Workdir:
    """Where the server keeps its files; removed at the end only if ours."""

    def __init__(self, config_dir=None, database_url=None):
        self.owned = config_dir is None
        if self.owned:
            self.path = tempfile.mkdtemp(prefix='embedded-placement-')
            with open(os.path.join(self.path, CONF_NAME), 'w') as f:
                f.write(PLACEMENT_CONF.format(db=database_url or (
                    'sqlite:///' + os.path.join(self.path, 'placement.db'))))
        else:
            self.path = os.path.abspath(config_dir)
        self._lock = threading.Lock()

    def file(self, name):
        return os.path.join(self.path, name)

    def remove(self):
        """Remove the directory if this process created it. Idempotent."""
        with self._lock:
            if self.owned:
                self.owned = False
                shutil.rmtree(self.path, ignore_errors=True)


def _stop_when_stdin_closes(workdir):
    try:
        while os.read(0, 4096):
            pass
    finally:
        workdir.remove()
        os._exit(0)


def _access_logged(app, path):
    log = open(path, 'a', buffering=1)

    def logged(environ, start_response):
        query = environ.get('QUERY_STRING')
        log.write('%s %s%s\n' % (environ['REQUEST_METHOD'],
                                 environ.get('PATH_INFO', ''),
                                 '?' + query if query else ''))
        return app(environ, start_response)
    return logged


def serve(args, workdir, started):
    """Load Placement and serve until ``shutdown()``; ``started(server)``
    is called once the server exists."""
    # Placement logs to stdout and stderr: both go to the log file from
    # here on, and only the protocol lines reach the caller's stdout.
    protocol = os.fdopen(os.dup(1), 'w', buffering=1)
    log_fd = os.open(workdir.file(LOG_NAME),
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    os.environ['OS_PLACEMENT_CONFIG_DIR'] = workdir.path
    if args.watch_stdin:
        threading.Thread(target=_stop_when_stdin_closes, args=(workdir,),
                         daemon=True).start()
    from placement.wsgi import api  # loads config, syncs the schema: ~2 s
    app = _access_logged(api.application, workdir.file(ACCESS_LOG_NAME))
    server = simple_server.make_server(LOOPBACK, args.port, app,
                                       handler_class=_QuietHandler)
    started(server)
    protocol.write('READY %d\n' % server.server_port)
    protocol.close()  # nobody need read the caller's stdout any more
    try:
        server.serve_forever()
    finally:
        server.server_close()


def main(argv):
    """Run until stopped; returns the exit code."""
    try:
        args = parse_args(argv)
    except UsageError as exc:
        print('embedded_server: error: %s' % exc, file=sys.stderr)
        return 2
    original_stderr = os.dup(2)
    workdir = Workdir(args.config_dir, args.database_url)
    print('WORKDIR %s' % workdir.path, flush=True)
    running = {}

    def stop(*_):
        server = running.get('server')
        if server is None:
            raise SystemExit(0)  # still loading Placement: unwind
        # Not an exception: wsgiref's handler catches everything (a bare
        # except) while it finishes a response, and would swallow it.
        threading.Thread(target=server.shutdown, daemon=True).start()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    code = 0
    try:
        serve(args, workdir, lambda server: running.update(server=server))
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
        workdir.remove()
    return code


if __name__ == '__main__':
    exit_code = main(sys.argv[1:])
    sys.stderr.flush()
    # Leave at once: the stdin watcher thread must not block interpreter exit.
    os._exit(exit_code)
