"""Small helpers for tests (never imported by the packages)."""

import os


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
