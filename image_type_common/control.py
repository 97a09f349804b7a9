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

"""The one signal path: how a running command is told to stop or re-read.

``install`` is the only place signal handlers are set (SIGTERM and SIGINT
stop, SIGHUP reloads), and they call what library callers call, ``stop()``
and ``reload()``. Every wait wakes on them at once: the flags are the
truth, a self-pipe the doorbell (no lock, safe in a handler). Inside
``interruptible()`` a signal also raises in the main thread: keystoneauth1
sleeps between its retries with no way to be woken, so raising from the
handler is the only way to cut them short.
"""

import contextlib
import os
import select
import signal
import time


class Interrupted(BaseException):
    """A signal's request cut a sync short: a BaseException, so no
    ``except Exception`` where it lands (logging's ``Handler.emit``, for
    one) swallows it."""


class Stopping(Interrupted):
    """Raised out of a wait when a stop was requested; unwinds a sync."""


class ReloadRequested(Interrupted):
    """A SIGHUP during a sync: start over with the re-read configuration."""


class Control:
    """One command's requests (the flags) and its doorbell (the pipe)."""

    def __init__(self):
        self._bell_r, self._bell_w = os.pipe()
        os.set_blocking(self._bell_r, False)
        os.set_blocking(self._bell_w, False)
        self.stop_requested = False
        #: The signal that asked to stop, if one did (for the exit code).
        self.stop_signal = None
        self.reload_requested = False
        self._interruptible = False

    def stop(self, interrupt=False, signum=None):
        """Ask to stop; ``interrupt``: from a signal handler (see the
        module's docstring)."""
        self.stop_requested = True
        if signum is not None and self.stop_signal is None:
            self.stop_signal = signum
        self._ring(interrupt, Stopping)

    def reload(self, interrupt=False):
        """Ask to re-read the configuration; ``interrupt``: as for ``stop``."""
        self.reload_requested = True
        self._ring(interrupt, ReloadRequested)

    def _ring(self, interrupt, raised):
        with contextlib.suppress(BlockingIOError):  # full: already ringing
            os.write(self._bell_w, b'!')
        if interrupt and self._interruptible:
            raise raised()

    @contextlib.contextmanager
    def interruptible(self):
        """A block a stop may cut anywhere: safe where every write is one
        atomic request and local files are replaced atomically."""
        if self.stop_requested:
            raise Stopping()
        outer, self._interruptible = self._interruptible, True
        try:
            yield
        finally:
            self._interruptible = outer

    def take_reload(self):
        """True once per reload request."""
        requested, self.reload_requested = self.reload_requested, False
        return requested

    def wait(self, seconds, wake_on_reload=True):
        """Wait up to ``seconds``; return True if a request cut it short."""
        deadline = time.monotonic() + seconds
        while True:
            if self.stop_requested or (wake_on_reload and
                                       self.reload_requested):
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            # In steps: select() refuses a timeout beyond what the OS takes.
            select.select([self._bell_r], [], [], min(remaining, 3600.0))
            with contextlib.suppress(BlockingIOError):
                os.read(self._bell_r, 65536)  # all a pipe holds

    def sleep(self, seconds):
        """A back-off inside a sync: raise Stopping if asked to stop."""
        self.wait(seconds, wake_on_reload=False)
        if self.stop_requested:
            raise Stopping()


#: The control whose handlers are installed (signals are process-wide).
_installed = None


@contextlib.contextmanager
def shielded():
    """A block a stop must not cut in two: a Placement write and the record
    of what it set (else a trait is left that no later run removes). A
    stop is honoured as the block ends; a reload waits for the next
    cycle."""
    control = _installed
    if control is None or not control._interruptible:
        yield
        return
    control._interruptible = False
    try:
        yield
    finally:
        control._interruptible = True
    if control.stop_requested:
        raise Stopping()


def install(control):
    """Route SIGTERM and SIGINT to ``control.stop`` and SIGHUP to
    ``control.reload`` (main thread only, as Python requires)."""
    global _installed
    _installed = control
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda sig, _: control.stop(True, sig))
    signal.signal(signal.SIGHUP, lambda *_: control.reload(True))
