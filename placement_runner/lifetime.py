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

"""Child processes that cannot outlive the process that started them.

The embedded server starts PostgreSQL and gunicorn; if it is killed outright
(SIGKILL, so no clean-up runs), the kernel's parent-death signal still
stops them, so nothing keeps running behind a dead test. The server is also
a subreaper: what its children leave behind becomes its own child, stopped
by pid before it exits. Whoever started the server can end the whole tree
by pid (pidfds: a reused pid is never signalled).
"""

import ctypes
import os
import select
import signal
import time

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig=signal.SIGTERM, now=False):
    """A ``preexec_fn``: the child gets ``sig`` when its parent dies.

    ``now=True``: this process instead, from now on (a gunicorn worker;
    if its master is gone already, it leaves at once).
    """
    libc = ctypes.CDLL(None, use_errno=True)  # loaded before the fork
    if now:
        libc.prctl(_PR_SET_PDEATHSIG, int(sig))
        if os.getppid() == 1:
            os._exit(1)
        return None
    parent = os.getpid()

    def preexec():
        libc.prctl(_PR_SET_PDEATHSIG, int(sig))
        if os.getppid() != parent:  # the parent died before prctl took
            os._exit(1)
    return preexec


_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Orphans of our children (a gunicorn worker whose master died, a
    PostgreSQL backend) become our children, not init's, so
    ``end_children`` finds and stops them by pid."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _parents():
    """{pid: ppid} of every process, from /proc."""
    parents = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open('/proc/%s/stat' % entry) as f:
                    parents[int(entry)] = int(
                        f.read().rsplit(') ', 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return parents


def children(pid=None):
    """The child pids of ``pid`` (default: this process), from /proc."""
    pid = os.getpid() if pid is None else pid
    return sorted(c for c, p in _parents().items() if p == pid)


def descendants(pid):
    """Every process below ``pid``, parents before children."""
    by_parent = {}
    for child, parent in _parents().items():
        by_parent.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in by_parent.get(todo.pop(0), []):
            found.append(child)
            todo.append(child)
    return found


def open_pidfds(pids):
    """{pid: pidfd} for those still running: a pidfd names that process
    and no other, even once its pid is reused."""
    fds = {}
    for pid in pids:
        try:
            fds[pid] = os.pidfd_open(pid)
        except ProcessLookupError:
            pass
    return fds


def end_processes(pidfds, timeout):
    """Wait up to ``timeout`` for those processes to exit (their parent
    stopping them), then SIGKILL the rest and wait for them too.

    ``pidfds`` ({pid: pidfd}) is emptied as they go, each pidfd closed,
    so an interrupted call can be repeated with what is left.
    """
    for sig in (None, signal.SIGKILL):
        if sig is not None:
            for fd in pidfds.values():
                try:
                    signal.pidfd_send_signal(fd, sig)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + timeout
        while pidfds:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            ready, _, _ = select.select(list(pidfds.values()), [], [],
                                        remaining)
            for pid, fd in list(pidfds.items()):
                if fd in ready:
                    del pidfds[pid]
                    os.close(fd)
        if not pidfds:
            return
    for fd in pidfds.values():  # unkillable (stuck in the kernel): give up
        os.close(fd)
    pidfds.clear()


def end_children(timeout=10.0):
    """SIGTERM every remaining child of this process (adopted orphans
    included), SIGKILL what is left after ``timeout``, and reap them."""
    fds = open_pidfds(children())
    for fd in fds.values():
        try:
            signal.pidfd_send_signal(fd, signal.SIGTERM)
        except ProcessLookupError:
            pass
    end_processes(fds, timeout)
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                return
        except ChildProcessError:
            return
