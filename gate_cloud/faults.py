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

"""The fault phase: take the cloud's parts down one at a time while it works.

While the reporters run and a background loop keeps booting, RabbitMQ,
MariaDB, Keystone, Placement and nova-scheduler are each stopped, held down
until every reporter has run a sync cycle during the outage (seen in its
log: a failure line, or two finished cycles), and started again. After
each: the next boot is placed right within BOUND seconds (polled with a
deadline); every reporter is still the same process, has synced again
(its GETs in Placement's access log, and a cycle with nothing failed in
its log); it logged at most one line at WARNING or above for the outage,
exactly one for the parts its cycle cannot do without (Placement, and
MariaDB behind it), none for the parts it never talks to (RabbitMQ,
nova-scheduler); and every provider's traits in Placement are exactly
what they were before the faults. Keystone may cost a reporter its line
or not: Placement's token cache answers for Keystone until it expires.

A reporter follows its compute node's nova.conf, log options included, so
its lines are in nova-compute's oslo.log file, told apart by process id.
"""

import functools
import time

from gate_cloud import boots
from gate_cloud import devstack_faults
from gate_cloud import devstack_node
from gate_cloud import logfiles
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud import wsgi_server
from gate_cloud.processes import GateError
from gate_cloud.services import reporters

#: From the restarted part answering again to the next boot ACTIVE on the
#: right host.
BOUND = 180.0
#: One boot attempt: a cast sent while a service's consumer is still
#: reconnecting to the new broker is lost (the server stays BUILD), so a
#: boot not ACTIVE by then is deleted and another one made, inside BOUND.
ATTEMPT = 60.0
#: How long a part is held down at most, waiting for every reporter to run
#: a cycle (a failing cycle may spend Placement's timeout on each retry).
HOLD_DEADLINE = 4 * reporters.INTERVAL + 150
#: A reporter must have synced again within this long after a restart.
SYNC_DEADLINE = 6 * reporters.INTERVAL + 60


#: The parts taken down, in this order: services of ``cloud.SERVICES``.
PARTS = ('rabbitmq', 'mariadb', 'keystone', 'placement', 'nova-scheduler')


def parts(ctx):
    """(name, stop, start) for each part; start waits until it answers."""
    out = []
    for name in PARTS:
        svc = ctx.service(name)

        def start(svc=svc):
            svc.start(ctx)
            svc.wait(ctx)
        out.append((name, functools.partial(svc.stop, ctx), start))
    return out


def _line_count(path):
    try:
        with open(path, 'rb') as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def log_records(path, pid, offset):
    """(priority, message) of each oslo.log line process ``pid`` wrote to
    ``path`` after byte ``offset``: the records ``devstack_faults``
    judges, its level as a syslog priority."""
    out = []
    with open(path, 'rb') as f:
        f.seek(offset)
        for raw in f:
            fields = raw.decode('utf-8', 'replace').split(None, 5)
            if len(fields) == 6 and fields[2] == str(pid):
                message = fields[5].rstrip('\n')
                if message.startswith('[') and '] ' in message:
                    # oslo.log's context: [-], [req-... - - - - -]
                    message = message.split('] ', 1)[1]
                out.append((devstack_node.LEVELS.get(fields[3], 6),
                            message))
    return out


def _reporter_synced_since(uuid, since_line):
    """A reporter GET of this provider's traits in Placement's access log
    after line ``since_line``."""
    path = wsgi_server.access_log('placement')
    with open(path, 'rb') as f:
        for number, line in enumerate(f):
            if number < since_line:
                continue
            text = line.decode('utf-8', 'replace')
            if '/resource_providers/%s/traits' % uuid in text and \
                    'virt-capabilities' in text:
                return True
    return False


def _boot_and_delete(client, image_id, n):
    """One background boot to its end: its status."""
    _, server = boots.boot(client, 'bg-%d' % n, image_id)
    boots.delete(client, server['id'])
    return server['status']


def _placed_right(admin, image_id, allowed_hosts, name):
    """Boot until one is ACTIVE on an allowed host (the API may refuse
    while the part comes back) or BOUND passes."""
    start = time.monotonic()
    last = None
    while time.monotonic() - start < BOUND:
        sid = None
        try:
            sid = boots.create(admin, name, image_id)
            server = boots.wait(admin, sid, deadline=min(
                ATTEMPT, BOUND - (time.monotonic() - start)))
        except GateError as exc:
            last = str(exc)
            if sid:
                try:
                    boots.delete(admin, sid)
                except GateError:
                    pass
            time.sleep(2)
            continue
        host = boots.host_of(server)
        boots.delete(admin, server['id'])
        if server['status'] == 'ACTIVE':
            if host not in allowed_hosts:
                raise GateError('after the restart a boot landed on %s, '
                                'allowed: %s' % (host,
                                                 sorted(allowed_hosts)))
            return time.monotonic() - start, host
        last = 'ERROR: %s' % server.get('fault', {}).get('message')
    raise GateError('no boot placed right within %ds (last: %s)'
                    % (BOUND, last))


def run(cloud, ctx, images):
    """Returns a list of per-fault results; raises GateError on failure.
    ``cloud`` is cloud.json's dict, ``ctx`` the running cloud
    (``context.Cloud``)."""
    admin = ctx.admin
    computes = cloud['computes']
    qcow2_hosts = {c['host'] for c in computes if 'qcow2' in c['image_types']
                   and not c['custom_traits']}
    providers = {p['name']: p['uuid'] for p in rest.providers(admin)}
    before = rest.all_traits(admin)
    pids = {c['host']: processes.pid_of(reporters.process_name(c['host']))
            for c in computes}
    # Its own client: tokens are not shared across threads.
    client = rest.Client('admin', admin.password)
    background = devstack_faults.BackgroundBoots(functools.partial(
        _boot_and_delete, client, images['raw']))
    background.start()
    results = []
    try:
        for name, stop, start in parts(ctx):
            results.append(_one_fault(name, stop, start, admin, images,
                                      computes, providers, pids,
                                      qcow2_hosts, before))
    finally:
        background.stopping.set()
        background.join(timeout=BOUND + 60)
    return {'bound_s': BOUND, 'faults': results,
            'background_boots': background.results}


def _one_fault(name, stop, start, admin, images, computes, providers, pids,
               qcow2_hosts, before):
    def since(marks, c):
        return log_records(c['service_log'], pids[c['host']],
                           marks[c['host']])

    down_marks = {c['host']: logfiles.size(c['service_log'])
                  for c in computes}
    t0 = time.monotonic()
    stop()
    devstack_faults.wait_every(
        '%s down: a reporter cycle during the outage' % name, computes,
        lambda c: devstack_faults.ran_a_cycle_during(since(down_marks, c)),
        HOLD_DEADLINE, name=lambda c: c['host'])
    held = time.monotonic() - t0
    up_marks = {c['host']: logfiles.size(c['service_log'])
                for c in computes}
    access_mark = _line_count(wsgi_server.access_log('placement'))
    t1 = time.monotonic()
    start()
    restarted = time.monotonic() - t1
    took, host = _placed_right(admin, images['qcow2'], qcow2_hosts,
                               'after-%s' % name)
    devstack_faults.wait_every(
        'after %s: a reporter in sync again' % name, computes,
        lambda c: devstack_faults.in_sync_again(since(up_marks, c))
        and _reporter_synced_since(providers[c['provider']], access_mark),
        SYNC_DEADLINE, name=lambda c: c['host'])
    lines = {}
    for c in computes:
        pid = processes.pid_of(reporters.process_name(c['host']))
        if pid != pids[c['host']] or not processes.alive(pid):
            raise GateError('reporter %s did not survive the %s outage'
                            % (c['host'], name))
        lines[c['host']] = devstack_faults.judge_lines(
            c['host'], name, since(down_marks, c))
    after = rest.all_traits(admin)
    if after != before:
        changed = sorted(p for p in set(before) | set(after)
                         if before.get(p) != after.get(p))
        raise GateError('traits changed over the %s outage on %s'
                        % (name, ', '.join(changed)))
    first_lines = {c['host']: (devstack_faults.severe(
        since(down_marks, c)) or [''])[0][:160] for c in computes}
    print('[faults] %s held down %.1f s, back in %.1f s; next qcow2 boot '
          'ACTIVE on %s %.1f s later; reporter lines %s; traits unchanged'
          % (name, held, restarted, host, took, lines), flush=True)
    for reporter, line in sorted(first_lines.items()):
        if line:
            print('[faults]   %s: %s' % (reporter, line), flush=True)
    return {'part': name, 'held_down_s': round(held, 1),
            'restart_s': round(restarted, 1),
            'next_boot_placed_s': round(took, 1), 'host': host,
            'reporter_log_lines': lines, 'reporter_first_line': first_lines,
            'traits_unchanged': True}
