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

"""A steady stream of boots while services restart, each boot judged.

One thread boots the cases in turn (``boot_cases``), one server at a
time, waits for each to end and deletes it. The phase driving the
restarts records when each service was down (``Windows``) and may drain
the stream around a stop (``drained``): the boot in flight ends first and
the next waits, as an operator takes a node out of rotation before
stopping it, so no RPC service is killed under a build it had accepted.

``summary`` judges every boot: a boot that landed on a host that cannot
boot its image, or that a request filter refused although some host
boots it, fails the phase wherever it happened; any other failure is
"refused during the restart of X" when it overlapped X's window and X is
one of ``REFUSERS`` (an API a boot calls while it is made), and fails the
phase otherwise.
"""

import contextlib
import threading
import time

from gate_cloud import boot_cases
from gate_cloud import rest

#: Services whose restart may refuse a boot made meanwhile: the APIs a
#: boot goes through synchronously (nova-api, and Keystone, Glance,
#: Placement behind it and behind nova-scheduler) and nova-scheduler.
#: nova-conductor is drained before it stops and queues what comes while
#: it is down; a compute node is out of rotation (the stream held) for its
#: whole restart: a boot lost to either fails the phase.
REFUSERS = ('keystone', 'placement', 'glance', 'nova-api', 'nova-scheduler')
#: After an API error, before the next boot.
RETRY_PAUSE = 1.0
#: How long ``drained`` waits for the boot in flight (a boot's deadline
#: and its delete's).
DRAIN_DEADLINE = 330.0


class Windows:
    """When each service was being restarted (epoch seconds)."""

    def __init__(self):
        self.spans = []

    @contextlib.contextmanager
    def restart(self, service):
        start = time.time()
        try:
            yield
        finally:
            self.spans.append((service, start, time.time()))

    def overlapping(self, boot):
        """The services restarted while ``boot`` ran."""
        end = boot.ended or time.time()
        return [name for name, start, stop in self.spans
                if boot.started <= stop and end >= start]


class Stream(threading.Thread):
    """Boots the cases in turn until ``stop``."""

    def __init__(self, password, cases, prefix='stream'):
        super().__init__(daemon=True, name='boot-stream')
        self.client = rest.Client('admin', password)
        self.cases = list(cases)
        self.prefix = prefix
        self.boots = []
        self._stopping = threading.Event()
        self._cond = threading.Condition()
        self._busy = False
        self._paused = 0
        #: Set once the stream waited for a drain to end (held a boot).
        self.held = threading.Event()

    def run(self):
        n = 0
        while not self._stopping.is_set():
            with self._cond:
                while self._paused and not self._stopping.is_set():
                    self.held.set()
                    self._cond.wait(1.0)
                if self._stopping.is_set():
                    return
                self._busy = True
            try:
                case = self.cases[n % len(self.cases)]
                n += 1
                record = boot_cases.boot_once(
                    self.client, case, '%s-%d-%s' % (self.prefix, n,
                                                     case.label))
                self.boots.append(record)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
            if record.error and not record.server_id:
                self._stopping.wait(RETRY_PAUSE)

    @contextlib.contextmanager
    def drained(self):
        """No boot in flight inside this block (the one running ends
        first, the next waits)."""
        deadline = time.monotonic() + DRAIN_DEADLINE
        with self._cond:
            self._paused += 1
            while self._busy and time.monotonic() < deadline:
                self._cond.wait(1.0)
        try:
            yield
        finally:
            with self._cond:
                self._paused -= 1
                self._cond.notify_all()

    def stop(self):
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        self.join(timeout=DRAIN_DEADLINE)


def summary(cases, boots, windows, refusers=REFUSERS):
    """{attempted, failed, refused: {service: n}, by_case, failures}: the
    figures of a stream, and each boot that fails the phase, said."""
    by_label = {c.label: c for c in cases}
    out = {'attempted': len(boots), 'failed': 0, 'refused': {},
           'by_case': {}, 'failures': []}
    for boot in boots:
        case = by_label[boot.case]
        verdict = boot_cases.judge(case, boot)
        tally = out['by_case'].setdefault(case.label,
                                          {'attempted': 0, 'ok': 0})
        tally['attempted'] += 1
        if verdict == 'ok':
            tally['ok'] += 1
            continue
        during = windows.overlapping(boot)
        excused = [s for s in during if s in refusers]
        if verdict == 'failed' and excused:
            for service in excused[:1]:
                out['refused'][service] = out['refused'].get(service, 0) + 1
            continue
        out['failed'] += 1
        story = boot_cases.why(boot.request_id) if boot.request_id else []
        out['failures'].append('%s boot %s at %s%s: %s%s' % (
            case.label, boot_cases.describe(case, boot, verdict),
            time.strftime('%H:%M:%S', time.localtime(boot.started)),
            ' (while %s restarted)' % ', '.join(during) if during else '',
            boot.error or boot.fault or boot.status,
            '; %s said: %s' % (boot.request_id, ' | '.join(
                story[:boot_cases.WHY_LINES])) if story else ''))
    return out
