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

"""The fault phase on the devstack cloud: its own units stopped and started.

Run on the node by ``devstack_job``. While the reporters run and a
background loop keeps booting raw servers, each of ``PARTS`` is stopped
through its unit, held down until every reporter has run a sync cycle
during the outage, and started again; then ``one_fault`` holds the cloud
to what gate.rst says (a raw boot ACTIVE within ``BOUND``, a qcow2 boot
refused, every reporter the same process and in sync again, its lines at
WARNING or above by ``expected_lines``, every provider's traits as they
were). One ``[faults]`` line per part; the first part that fails ends the
phase with one line naming it.
"""

import sys
import threading
import time

from gate_cloud import GateError
from gate_cloud import devstack_node as node

#: The parts taken down, in this order: (name, systemd unit).
PARTS = (('rabbitmq', 'rabbitmq-server.service'),
         ('mariadb', 'mariadb.service'),
         ('keystone', 'devstack@keystone.service'),
         ('placement', 'devstack@placement-api.service'),
         ('nova-scheduler', 'devstack@n-sch.service'))
REPORTERS = 'devstack@image-type-reporter*'
#: Parts without which a reporter's cycle fails: exactly one line each.
NEEDED_BY_REPORTERS = ('mariadb', 'placement')
#: Parts a reporter never talks to: no line at all.
UNUSED_BY_REPORTERS = ('rabbitmq', 'nova-scheduler')
MAX_LOG_LINES = 1
#: From the restarted part's unit active to the next raw boot ACTIVE.
BOUND = 180.0
#: How long a server an outage left behind may take to delete.
LEFTOVER_DELETE = 300
#: One boot attempt (a cast sent while a consumer still reconnects to the
#: new broker is lost): past this it is deleted and another one made.
ATTEMPT = 60.0
#: How long a part is held down at most, and how long a reporter has to
#: finish a clean cycle after it is back: a few of the job's reporter
#: intervals (IMAGE_TYPE_REPORTER_INTERVAL) and a failing cycle's retries.
HOLD_DEADLINE = 300.0
SYNC_DEADLINE = 300.0
#: journald's priorities at WARNING or above (syslog's 0-4).
SEVERE_PRIORITY = 4


def reporter_units():
    out = node.run(['systemctl', 'list-units', REPORTERS, '--plain',
                    '--no-legend', '--state=active'])
    units = sorted(line.split()[0] for line in out.splitlines()
                   if line.strip())
    if not units:
        raise GateError('no reporter unit is active (%s)' % REPORTERS)
    return units


def severe(records):
    return [message for priority, message in records
            if priority <= SEVERE_PRIORITY]


def cycles_done(records):
    return [message for _, message in records if 'sync done:' in message]


def ran_a_cycle_during(records):
    """A cycle began after the mark: it failed (its line), or a second
    cycle finished (the first may have begun before the mark)."""
    return bool(severe(records)) or len(cycles_done(records)) >= 2


def in_sync_again(records):
    return any(m.endswith(', 0 failed') for m in cycles_done(records))


def expected_lines(part):
    """How many lines at WARNING or above an outage of ``part`` costs a
    reporter: an exact number, or None for "at most MAX_LOG_LINES"."""
    if part in NEEDED_BY_REPORTERS:
        return 1
    if part in UNUSED_BY_REPORTERS:
        return 0
    return None


def judge_lines(unit, part, records):
    """The reporter's lines over an outage, against the policy above;
    returns how many it logged."""
    said = severe(records)
    expected = expected_lines(part)
    if len(said) > MAX_LOG_LINES or (expected is not None
                                      and len(said) != expected):
        raise GateError('reporter %s logged %d line(s) at WARNING or above '
                        'over the %s outage (expected %s): %s' % (
                            unit, len(said), part,
                            expected if expected is not None
                            else 'at most %d' % MAX_LOG_LINES,
                            ' | '.join(m[:160] for m in said)))
    if said and not any('sync recovered after' in m for _, m in records):
        raise GateError('reporter %s never said it recovered from the %s '
                        'outage' % (unit, part))
    return len(said)


def wait_every(what, reporters, done, deadline):
    """Poll ``done(reporter)`` each second until true for every one, or
    raise naming ``what`` and those it is not true for."""
    end = time.monotonic() + deadline
    pending = list(reporters)
    while True:
        pending = [r for r in pending if not done(r)]
        if not pending:
            return
        if time.monotonic() > end:
            raise GateError('%s: not within %ds for %s' % (
                what, deadline, ', '.join(sorted(pending))))
        time.sleep(1)


def boot_until(stopping, boot, results):
    """Boots one after another until ``stopping`` is set: ``boot(n)``
    makes the n-th to its end and gives its status; what each ended in
    is kept in ``results`` (an outage may cost a boot)."""
    n = 0
    while not stopping.is_set():
        n += 1
        try:
            results.append(boot(n))
        except Exception as exc:  # refused while a part is down
            results.append('refused: %s' % str(exc)[:80])
            stopping.wait(3)


def placed_right(cloud, images, flavor_id, part):
    """After the restart: a raw boot ACTIVE (retried within BOUND while
    the API may still refuse), then a qcow2 boot refused by the filter."""
    start = time.monotonic()
    last = None
    while True:
        left = BOUND - (time.monotonic() - start)
        if left <= 0:
            raise GateError('after %s: no raw boot ACTIVE within %ds '
                            '(last: %s)' % (part, BOUND, last))
        try:
            server = cloud.boot('faults-after-%s' % part, images['raw'],
                                flavor_id, min(ATTEMPT, left))
        except GateError as exc:
            last = str(exc)
            time.sleep(2)
            continue
        if server['status'] == 'ACTIVE':
            break
        last = 'ERROR: %s' % server.get('fault', {}).get('message')
    took = time.monotonic() - start
    refused = cloud.boot('faults-qcow2-after-%s' % part, images['qcow2'],
                         flavor_id, ATTEMPT)
    fault = refused.get('fault', {}).get('message', '')
    if refused['status'] != 'ERROR' or 'No valid host' not in fault:
        raise GateError('after %s: a qcow2 boot ended %s (%s), not in "No '
                        'valid host": the request filter no longer acts'
                        % (part, refused['status'], fault or 'no fault'))
    return took


def one_fault(cloud, part, unit, reporters, pids, images, flavor_id,
              before):
    marks = {u: node.journal(u)[0] for u in reporters}
    t0 = time.monotonic()
    node.run(['systemctl', 'stop', unit])
    try:
        wait_every('%s down: a reporter cycle during the outage' % part,
                   reporters,
                   lambda u: ran_a_cycle_during(node.journal(u, marks[u])[1]),
                   HOLD_DEADLINE)
    finally:
        # Started again whatever happened: the phases after this one
        # (and a kept cloud) need it.
        held = time.monotonic() - t0
        up_marks = {u: node.journal(u)[0] for u in reporters}
        t1 = time.monotonic()
        node.run(['systemctl', 'start', unit])
        restarted = time.monotonic() - t1
    took = placed_right(cloud, images, flavor_id, part)
    wait_every('after %s: a reporter cycle with nothing failed' % part,
               reporters,
               lambda u: in_sync_again(node.journal(u, up_marks[u])[1]),
               SYNC_DEADLINE)
    lines = {}
    for u in reporters:
        if node.main_pid(u) != pids[u]:
            raise GateError('reporter %s did not survive the %s outage '
                            '(process %d, now %d)' % (u, part, pids[u],
                                                      node.main_pid(u)))
        lines[u] = judge_lines(u, part, node.journal(u, marks[u])[1])
    after = cloud.all_traits()
    if after != before:
        changed = sorted(p for p in set(before) | set(after)
                         if before.get(p) != after.get(p))
        raise GateError('traits changed over the %s outage on %s'
                        % (part, ', '.join(changed)))
    print('[faults] %s held down %.1f s, back in %.1f s; next raw boot '
          'ACTIVE %.1f s later, qcow2 refused; reporter lines %s; traits '
          'unchanged' % (part, held, restarted, took, lines), flush=True)


def run():
    cloud = node.Cloud()
    reporters = reporter_units()
    pids = {u: node.main_pid(u) for u in reporters}
    raw, flavor_id = node.tempest_boot()
    images = {'raw': raw, 'qcow2': cloud.upload('faults-qcow2', 'qcow2')}
    before = cloud.all_traits()
    # Its own client: tokens are not shared across threads.
    booting = node.Cloud()
    stopping, done = threading.Event(), []
    background = threading.Thread(target=boot_until, daemon=True, args=(
        stopping, lambda n: booting.boot('faults-bg-%d' % n, images['raw'],
                                         flavor_id, ATTEMPT)['status'],
        done))
    background.start()
    try:
        for part, unit in PARTS:
            one_fault(cloud, part, unit, reporters, pids, images, flavor_id,
                      before)
    finally:
        stopping.set()
        background.join(timeout=BOUND)
        # What an outage left behind (a delete Keystone refused, a build
        # nova-scheduler's outage held): Nova's RPC timeout (60 s) and a
        # retry may pass before it can go.
        for server_id in cloud.servers('faults-'):
            cloud.delete(server_id, deadline=LEFTOVER_DELETE)
        cloud.delete_image(images['qcow2'])
    print('[faults] background boots: %d, %d ACTIVE, %d refused while a '
          'part was down, %d ERROR' % (
              len(done), done.count('ACTIVE'),
              sum(r.startswith('refused') for r in done),
              done.count('ERROR')), flush=True)


if __name__ == '__main__':
    sys.exit(node.phase_main('faults', run))
