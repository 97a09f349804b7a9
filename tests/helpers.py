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

"""Small helpers for tests (never imported by the packages).

Tests synchronise on events: a line a child process printed, or a state
Placement reports. The timeouts here are safety nets that turn a hang into
a failure, never the thing a test waits for.
"""

import contextlib
import http.server
import os
import signal
import subprocess
import sys
import threading
import time

#: The repository's root, wherever in tests/ a module sits.
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAFETY_TIMEOUT = 120
#: Where the functional suites that race writers run: the embedded default,
#: and PostgreSQL with several API workers (real concurrency, real 409s).
BACKENDS = ('sqlite', 'postgresql')
POSTGRESQL_WORKERS = 2


def on_every_backend(metafunc):
    """For a module's ``pytest_generate_tests``: every test there that
    uses the ``placement`` fixture runs once per backend."""
    if 'placement' in metafunc.fixturenames:
        metafunc.parametrize('placement', BACKENDS, indirect=True)


def descendants(pid):
    """Every live process below ``pid`` (read from /proc)."""
    children = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open('/proc/%s/stat' % entry) as f:
                    ppid = int(f.read().rsplit(') ', 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purposes
        with open('/proc/%d/stat' % pid) as f:
            return f.read().split(') ')[1].split()[0] != 'Z'
    except FileNotFoundError:
        return False
    return True


def clean_env(**extra):
    """The environment without OS_* variables, so tests choose credentials."""
    env = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
    env.update(extra)
    return env


def wait_until(predicate, what, timeout=SAFETY_TIMEOUT, ignore=()):
    """Poll ``predicate`` (a read of real state) until it is true.

    Exceptions in ``ignore`` count as "not yet" (Placement restarting).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except ignore:
            pass
        time.sleep(0.05)
    raise AssertionError('never happened: %s' % what)


class Lines:
    """Every line a stream yields, collected by a thread; waitable."""

    def __init__(self, stream):
        self._lines = []
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._read, args=(stream,),
                                        daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            with self._cond:
                self._lines.append(line.rstrip('\n'))
                self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def count(self, text):
        with self._cond:
            return sum(1 for line in self._lines if text in line)

    def wait_for(self, text, count=1, timeout=SAFETY_TIMEOUT):
        """Block until ``count`` lines contain ``text``."""
        with self._cond:
            done = self._cond.wait_for(
                lambda: self.count(text) >= count or self._closed, timeout)
            if self.count(text) < count:
                raise AssertionError('%d line(s) with %r never came%s:\n%s' % (
                    count, text, ' (stream closed)' if done else '',
                    self.text()[-3000:]))

    def text(self):
        with self._cond:
            return '\n'.join(self._lines)

    def join(self):
        self._thread.join(SAFETY_TIMEOUT)


class Child:
    """A child process whose output lines a test can wait for.

    Stopped by its own pid: ``finish()`` waits for it, and leaving a ``with``
    block kills it if it still runs.
    """

    def __init__(self, args, env=None):
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=env or clean_env())
        self.out = Lines(self.process.stdout)
        self.err = Lines(self.process.stderr)

    @classmethod
    def module(cls, module, *args, env=None):
        return cls([sys.executable, '-m', module, *args], env=env)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.kill()

    def send(self, sig):
        os.kill(self.process.pid, sig)

    def finish(self, timeout=SAFETY_TIMEOUT):
        """Wait for the exit; returns the exit code."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.dump_and_kill()
            raise AssertionError('still running after %s s:\n%s'
                                 % (timeout, self.err.text()[-6000:]))
        self.out.join()
        self.err.join()
        return code

    def dump_and_kill(self):
        """SIGABRT first: a Python child run with ``-X faulthandler``
        writes every thread's stack to stderr, so an overrun says where it
        stood; then SIGKILL if it still runs."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGABRT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(10)
        self.kill()
        self.err.join()

    def kill(self):
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()


class RecordingServer:
    """An HTTP server on 127.0.0.1 that records every request line and
    answers ``status`` (503 by default): proof of what a command sent, for
    tests that assert it sent nothing, and a stand-in for an endpoint that
    refuses everything. ``tls``: an ``ssl.SSLContext`` (server side), to
    answer on HTTPS."""

    def __init__(self, status=503, tls=None):
        requests = self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _record(self):
                requests.append('%s %s' % (self.command, self.path))
                self.send_response(status)
                self.send_header('Content-Length', '0')
                self.end_headers()

            do_GET = do_PUT = do_POST = do_DELETE = _record

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                       Handler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket,
                                                  server_side=True)
        self.endpoint = '%s://127.0.0.1:%d' % (
            'https' if tls else 'http', self._server.server_port)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True)
        self._thread.start()

    def nova_conf_section(self):
        return ('[placement]\nauth_type = admin_token\nendpoint = %s\n'
                'token = admin\nconnect_retries = 0\n'
                'status_code_retries = 0\n' % self.endpoint)

    def stop(self):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(SAFETY_TIMEOUT)


def image_type_rule(image_types=(), custom=()):
    """The owner rule of a reporter that keeps these image-type traits (and
    custom ones), as with ``image_type_traits_owner = reporter``."""
    from virt_capabilities import ownership
    return ownership.OwnerRule(image_types=frozenset(image_types),
                           owns_image_types=True, custom=frozenset(custom))


#: The names an oslo.config ConfigOpts goes by in this project's code.
_CONF_NAMES = ('conf', 'CONF')
#: ConfigOpts' own methods: calling one reads no option.
_CONF_METHODS = frozenset((
    'register_opt', 'register_opts', 'register_cli_opt', 'register_cli_opts',
    'register_group', 'unregister_opt', 'set_default', 'set_override',
    'clear_default', 'clear_override', 'reset', 'clear',
    'reload_config_files', 'mutate_config_files', 'import_opt',
    'import_group', 'list_all_sections', 'find_file', 'log_opt_values'))


def _is_conf(node):
    import ast
    return (isinstance(node, ast.Name) and node.id in _CONF_NAMES) or (
        isinstance(node, ast.Attribute) and node.attr in _CONF_NAMES)


def option_reads_by_name(path):
    """``line: source`` of each place the module at ``path`` reads a
    configuration option by name: ``conf.NAME`` or ``conf.GROUP.NAME``,
    ``conf[...]``, ``getattr(conf, ...)`` or ``loading.read(...)``
    (``conf.register_opts`` and ConfigOpts' other methods are no read)."""
    import ast
    with open(path) as f:
        source = f.read()
    found = []
    for node in ast.walk(ast.parse(source)):
        read = (
            (isinstance(node, ast.Attribute) and _is_conf(node.value)
             and node.attr not in _CONF_METHODS)
            or (isinstance(node, ast.Subscript) and _is_conf(node.value))
            or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ('getattr', 'hasattr') and node.args
                and _is_conf(node.args[0]))
            or (isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == 'read'
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == 'loading'))
        if read:
            found.append('%s:%d: %s' % (os.path.relpath(path, REPO),
                                        node.lineno,
                                        ast.get_source_segment(source, node)))
    return found


def package_modules(*folders):
    """The .py files under ``folders`` (relative to the repository)."""
    paths = []
    for folder in folders:
        for root, _, files in os.walk(os.path.join(REPO, folder)):
            paths.extend(os.path.join(root, f) for f in sorted(files)
                         if f.endswith('.py'))
    return sorted(paths)


#: Where CI keeps the upstream snapshots (devstack, grenade): beside the
#: checkout.
UPSTREAM = os.path.join(os.path.dirname(REPO), 'shared', 'upstream')


def upstream_tree(tmp_path, snapshot):
    """An upstream snapshot (``../shared/upstream/SNAPSHOT``) unpacked for
    this test: its one tree. Missing, it fails under CI and skips
    elsewhere."""
    import tarfile

    import pytest
    tarball = os.path.join(UPSTREAM, snapshot)
    if not os.path.isfile(tarball):
        if os.environ.get('CI') == 'true':
            pytest.fail('%s is missing: CI keeps the upstream snapshots in '
                        '../shared/upstream beside the checkout' % tarball)
        pytest.skip('no snapshot at %s (CI has one in ../shared/upstream '
                    'beside the checkout)' % tarball)
    dest = tmp_path / 'upstream'
    with tarfile.open(tarball) as tar:
        top = tar.getmembers()[0].name.split('/', 1)[0]
        tar.extractall(dest, filter='data')
    return dest / top


def uninstall_filters(integration):
    """Take the request filters' entry out of Nova's list and forget the
    install (``integration``: the module as the test imported it): a
    test's clean-up, which nova-scheduler itself never needs."""
    with integration._install_lock:
        installed = integration._installed
        integration._remove_entries(installed.nova if installed
                                    else integration.compat.resolve())
        integration._installed = None
