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

"""Start services in process groups of their own; stop them by pid.

Every process the cloud starts is recorded in ``.cloud/pids.json`` (name,
pid, which is also its process group, and its log), so ``down`` from
another shell stops exactly those and nothing else.
"""

import concurrent.futures
import json
import os
import pathlib
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

from gate_cloud import layout

PIDS = 'pids.json'
#: Services start and stop from several threads at once: one writer of
#: pids.json at a time.
_RECORDS_LOCK = threading.RLock()
#: Set when a start-up is abandoned: every wait gives up at once.
CANCEL = threading.Event()
#: The processes this process started, by name: their exit is seen at once.
_STARTED = {}


class GateError(Exception):
    """One line naming what failed: the command prints it and exits 1."""


def _records():
    try:
        return json.loads(layout.path(PIDS).read_text())
    except FileNotFoundError:
        return []


def _save(records):
    tmp = layout.path(PIDS + '.new')
    tmp.write_text(json.dumps(records, indent=1))
    tmp.replace(layout.path(PIDS))


def records():
    return list(_records())


def start(name, argv, env=None, cwd=None, log=None):
    """Start ``argv`` in its own session; its output goes to ``log``."""
    log = pathlib.Path(log or layout.path('logs', name + '.log'))
    log.parent.mkdir(parents=True, exist_ok=True)
    with _RECORDS_LOCK:
        with open(log, 'ab') as out:
            proc = subprocess.Popen(
                [str(a) for a in argv], stdin=subprocess.DEVNULL,
                stdout=out, stderr=out,
                env=env or layout.env_for_services(),
                cwd=cwd or str(layout.STATE), start_new_session=True)
        recs = _records()
        recs.append({'name': name, 'pid': proc.pid, 'log': str(log),
                     'argv': [str(a) for a in argv],
                     'started_at': time.time()})
        _save(recs)
        _STARTED[name] = proc
    return proc


def started(name):
    """The last process called ``name`` this process started (for
    ``wait_for`` to fail as soon as it exits), or None."""
    return _STARTED.get(name)


def alive(pid):
    """Is anything of the process group ``pid`` leads still there?"""
    return _answers(os.killpg, pid)


def running(pid):
    """Is process ``pid`` itself still there (a group leader or not)?"""
    return _answers(os.kill, pid)


def _answers(send, pid):
    """Signal 0 sent with ``send`` finds its target (someone else's
    process counts: it is there)."""
    try:
        send(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def children(pid):
    """The process ids whose parent is ``pid`` (from /proc)."""
    out = set()
    for entry in pathlib.Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / 'stat').read_text()
        except OSError:
            continue  # gone meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and ")".
        fields = stat.rsplit(')', 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(pid):
            out.add(int(entry.name))
    return out


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def stop_record(rec, grace=20.0):
    """SIGTERM the process group, SIGKILL it after ``grace`` seconds."""
    pid = rec['pid']
    if not alive(pid):
        _reap(pid)
        return
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        _reap(pid)
        if not alive(pid):
            return
        time.sleep(0.2)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        _reap(pid)
        time.sleep(0.1)


def stop(name, grace=20.0):
    """Stop every recorded process called ``name`` (none is no error)."""
    for rec in [r for r in _records() if r['name'] == name]:
        stop_record(rec, grace)
        with _RECORDS_LOCK:
            _save([r for r in _records() if r != rec])


def stop_many(names, grace=20.0):
    """Stop several named processes at once."""
    names = list(names)
    if not names:
        return
    with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
        list(pool.map(lambda name: stop(name, grace), names))


def stop_all():
    """Stop every recorded process still running, all at once: what no
    service's ``stop`` took (a crashed start's, or a service no longer in
    the list); then forget them all."""
    recs = _records()
    if recs:
        with concurrent.futures.ThreadPoolExecutor(len(recs)) as pool:
            list(pool.map(stop_record, recs))
    if layout.path(PIDS).exists():
        layout.path(PIDS).unlink()


def pid_of(name):
    for rec in _records():
        if rec['name'] == name:
            return rec['pid']
    return None


def started_at(name):
    """When the recorded process ``name`` was started (epoch seconds), or
    0 when none is recorded."""
    for rec in reversed(_records()):
        if rec['name'] == name:
            return rec.get('started_at', 0)
    return 0


def group_pids(pgid):
    """Every live process in a process group (for resident memory)."""
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            found.append(int(entry))
    return found


def rss_kib(pids):
    total = 0
    for pid in pids:
        try:
            with open('/proc/%d/status' % pid) as f:
                for line in f:
                    if line.startswith('VmRSS:'):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def port_in_use(port, host=layout.HOST):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(layout.PROBE_TIMEOUT)
        return s.connect_ex((host, port)) == 0


def check_ports_free(ports):
    """Refuse, naming it, the first of ``ports`` ({label: port}) in use."""
    for name, port in ports.items():
        if port_in_use(port):
            raise GateError('port %s:%d (%s) is in use; stop whatever holds '
                            'it (another cloud?) and retry'
                            % (layout.HOST, port, name))


def wait_for(what, probe, proc=None, deadline=layout.START_DEADLINE,
             log=None):
    """Poll ``probe()`` until true; fail naming ``what`` at the deadline
    or as soon as ``proc`` exits."""
    end = time.monotonic() + deadline
    delay = 0.2
    while True:
        if CANCEL.is_set():
            raise GateError('%s: wait abandoned (another part failed)'
                            % what)
        if probe():
            return
        if proc is not None and proc.poll() is not None:
            raise GateError('%s exited with %s while starting; see %s'
                            % (what, proc.returncode, log or 'its log'))
        if time.monotonic() > end:
            raise GateError('%s not ready after %ds; see %s'
                            % (what, deadline, log or 'its log'))
        time.sleep(delay)
        delay = min(delay * 1.5, 2.0)


def http_ok(url):
    """Probe: any HTTP answer below 500, within PROBE_TIMEOUT."""
    def probe():
        try:
            # Only the cloud's own http://127.0.0.1 URLs are probed.
            with urllib.request.urlopen(  # noqa: S310
                    url, timeout=layout.PROBE_TIMEOUT):
                return True
        except urllib.error.HTTPError as exc:
            return exc.code < 500
        except (OSError, ValueError):
            return False
    return probe


def port_open(port):
    return lambda: port_in_use(port)


def run(what, argv, env=None, timeout=600, log=None):
    """Run a one-shot command; failure is one line naming it and its log."""
    log = log or layout.path('logs', 'setup.log')
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, 'ab') as out:
        out.write(('\n$ %s\n' % ' '.join(str(a) for a in argv)).encode())
        out.flush()
        try:
            proc = subprocess.run(
                [str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=out,
                stderr=out, env=env or layout.env_for_services(),
                cwd=str(layout.STATE), timeout=timeout)
        except subprocess.TimeoutExpired:
            raise GateError('%s timed out after %ds; see %s'
                            % (what, timeout, log))
        except OSError as exc:
            raise GateError('%s could not start: %s' % (what, exc))
    if proc.returncode:
        raise GateError('%s failed (exit %d); see %s'
                        % (what, proc.returncode, log))


def run_for_status(what, argv, env=None, timeout=600, log=None):
    """Run a one-shot command whose exit code means something (a status
    check's): returns (exit code, its output), the output also appended
    to ``log`` (a path or a string)."""
    log = pathlib.Path(log or layout.path('logs', 'setup.log'))
    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(
            [str(a) for a in argv], stdin=subprocess.DEVNULL,
            capture_output=True, env=env or layout.env_for_services(),
            cwd=str(layout.STATE), timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GateError('%s timed out after %ds' % (what, timeout)) from None
    except OSError as exc:
        raise GateError('%s could not start: %s' % (what, exc)) from None
    output = (proc.stdout + proc.stderr).decode('utf-8', 'replace')
    with open(log, 'a') as out:
        out.write('\n$ %s\n%s[exit %d]\n' % (' '.join(str(a) for a in argv),
                                             output, proc.returncode))
    return proc.returncode, output
