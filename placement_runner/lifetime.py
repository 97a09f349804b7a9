"""Child processes that cannot outlive the process that started them.

The embedded server starts PostgreSQL and gunicorn; if it is killed outright
(SIGKILL, so no clean-up runs), the kernel's parent-death signal still
stops them, so nothing keeps running behind a dead test.
"""

import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig=signal.SIGTERM):
    """A ``preexec_fn``: the child gets ``sig`` when its parent dies."""
    libc = ctypes.CDLL(None, use_errno=True)  # loaded before the fork
    parent = os.getpid()

    def preexec():
        libc.prctl(_PR_SET_PDEATHSIG, int(sig))
        if os.getppid() != parent:  # the parent died before prctl took
            os._exit(1)
    return preexec
