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

"""Warn-once under requests that run at once (nova-scheduler's native
threads): the check and the record are one step, so the same new value
from two requests is warned about once.

The interleaving is forced, not hoped for: the key's own ``__hash__``
pauses the first request between "not seen yet" and "remember it", and the
second request runs meanwhile. The pause ends when the second request has
either finished (no lock: both would warn) or is waiting for the lock.
"""

import threading

from image_type_filter.scheduler import warn_once

GUARD = 60  # seconds: only a broken test ever waits this long
REAL_LOCK = threading.Lock


class ObservedLock:
    """A lock that says when somebody has to wait for it."""

    def __init__(self, waiting):
        self._lock = REAL_LOCK()
        self._waiting = waiting

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            self._waiting.set()
            self._lock.acquire()
        return self

    def __exit__(self, *exc):
        self._lock.release()


class Key:
    """Equal to every other Key; ``on_hash(n)`` runs at its n-th hash."""

    def __init__(self, on_hash=None):
        self.on_hash = on_hash
        self.hashed = 0

    def __hash__(self):
        self.hashed += 1
        if self.on_hash:
            self.on_hash(self.hashed)
        return 1

    def __eq__(self, other):
        return isinstance(other, Key)


def test_two_requests_with_the_same_new_value_warn_once(monkeypatch):
    progress = threading.Event()
    with monkeypatch.context() as patch:
        patch.setattr(warn_once.threading, 'Lock',
                      lambda: ObservedLock(progress))
        memory = warn_once.WarnOnce()
    answers = {}

    def second():
        answers['second'] = memory.first_time(Key())
        progress.set()

    started = []

    def pause(nth):
        # The first hash is the "seen yet?" check; the next one records it.
        if nth == 2 and not started:
            other = threading.Thread(target=second)
            started.append(other)
            other.start()
            assert progress.wait(GUARD)

    answers['first'] = memory.first_time(Key(pause))
    started[0].join(GUARD)
    assert sorted(answers.values()) == [False, True]


def test_the_bound_holds():
    memory = warn_once.WarnOnce(limit=3)
    assert [memory.first_time(k) for k in 'abcab'] == [True] * 3 + [
        False, False]
    assert memory.first_time('d') and memory.first_time('d')
    assert len(memory.seen) == 3
