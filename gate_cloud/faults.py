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

"""Point 4: restart the cloud's parts one at a time while it works.

While the reporters run and a background loop keeps booting, RabbitMQ,
MariaDB, Keystone, Placement and nova-scheduler are restarted one after
another. After each: the next boot is placed right within BOUND seconds
(polled with a deadline), every reporter is still the same process, has
synced again (its GETs in Placement's access log) and logged at most
MAX_LOG_LINES lines about it, and every provider's traits in Placement
are exactly what they were before the faults.
"""

import threading
import time

from gate_cloud import boots
from gate_cloud import cloud as cloud_mod
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud import services
from gate_cloud.processes import GateError

#: From the restarted part answering again to the next boot ACTIVE on the
#: right host.
BOUND = 180.0
#: How many log lines one outage may cost a reporter (one is the goal).
MAX_LOG_LINES = 3
#: One boot attempt: a cast sent while a service's consumer is still
#: reconnecting to the new broker is lost (the server stays BUILD), so a
#: boot not ACTIVE by then is deleted and another one made, inside BOUND.
ATTEMPT = 60.0
#: A reporter must have synced again within this long after a restart.
SYNC_DEADLINE = 6 * layout.REPORTER_INTERVAL + 60


def _restart_wsgi(name, config_dir, **kw):
    def restart():
        processes.stop(name)
        proc, log = services.start_wsgi(name, config_dir, **kw)
        services.wait_wsgi(name, proc, log, '/v3' if name == 'keystone'
                           else '')
    return restart


def _restart_rabbitmq():
    processes.stop('rabbitmq', grace=60)
    services.start_rabbit_only()


def _restart_mariadb():
    processes.stop('mariadb', grace=60)
    services.start_mariadb_server()


def restarts(admin):
    return [
        ('rabbitmq', _restart_rabbitmq),
        ('mariadb', _restart_mariadb),
        ('keystone', _restart_wsgi('keystone', layout.path('keystone'))),
        ('placement', _restart_wsgi('placement', layout.path('placement'))),
        ('nova-scheduler', lambda: cloud_mod.restart_scheduler(admin)),
    ]


def _line_count(path):
    try:
        with open(path, 'rb') as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def _reporter_synced_since(uuid, since_line):
    """A reporter GET of this provider's traits in Placement's access log
    after line ``since_line``."""
    path = layout.path('logs', 'placement-access.log')
    with open(path, 'rb') as f:
        for number, line in enumerate(f):
            if number < since_line:
                continue
            text = line.decode('utf-8', 'replace')
            if '/resource_providers/%s/traits' % uuid in text and \
                    'virt-capabilities' in text:
                return True
    return False


class BackgroundBoots(threading.Thread):
    """Boots go on during the faults: one raw server at a time."""

    def __init__(self, admin, image_id):
        super().__init__(daemon=True)
        self.client = rest.Client('admin', admin.password)
        self.image_id = image_id
        self.stopping = threading.Event()
        self.results = []

    def run(self):
        n = 0
        while not self.stopping.is_set():
            n += 1
            try:
                _, server = boots.boot(self.client, 'bg-%d' % n,
                                       self.image_id)
                self.results.append(server['status'])
                boots.delete(self.client, server['id'])
            except Exception as exc:  # an outage may cost a boot
                self.results.append('failed: %s' % str(exc)[:80])
                self.stopping.wait(3)


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


def run(cloud, admin, images):
    """Returns a list of per-fault results; raises GateError on failure."""
    computes = cloud['computes']
    qcow2_hosts = {c['host'] for c in computes if 'qcow2' in c['image_types']
                   and not c['custom_traits']}
    providers = {p['name']: p['uuid'] for p in rest.providers(admin)}
    before = rest.all_traits(admin)
    reporter_pids = {c['host']: processes.pid_of('reporter-' + c['host'])
                     for c in computes}
    background = BackgroundBoots(admin, images['raw'])
    background.start()
    results = []
    try:
        for name, restart in restarts(admin):
            log_lines = {c['host']: _line_count(c['reporter_log'])
                         for c in computes}
            access_mark = _line_count(layout.path('logs',
                                                  'placement-access.log'))
            t0 = time.monotonic()
            restart()
            restarted = time.monotonic() - t0
            took, host = _placed_right(admin, images['qcow2'], qcow2_hosts,
                                       'after-%s' % name)
            # Every reporter: same process, synced again, few log lines.
            end = time.monotonic() + SYNC_DEADLINE
            pending = {c['host'] for c in computes}
            while pending and time.monotonic() < end:
                for c in computes:
                    if c['host'] in pending and _reporter_synced_since(
                            providers[c['provider']], access_mark):
                        pending.discard(c['host'])
                if pending:
                    time.sleep(2)
            if pending:
                raise GateError('after restarting %s, reporter(s) %s did '
                                'not sync again within %ds'
                                % (name, sorted(pending), SYNC_DEADLINE))
            lines = {}
            for c in computes:
                pid = processes.pid_of('reporter-' + c['host'])
                if pid != reporter_pids[c['host']] or not processes.alive(
                        pid):
                    raise GateError('reporter %s did not survive the %s '
                                    'restart' % (c['host'], name))
                lines[c['host']] = _line_count(c['reporter_log']) - \
                    log_lines[c['host']]
            if max(lines.values()) > MAX_LOG_LINES:
                raise GateError('a reporter logged %s lines over the %s '
                                'restart (at most %d)'
                                % (max(lines.values()), name,
                                   MAX_LOG_LINES))
            after = rest.all_traits(admin)
            if after != before:
                changed = sorted(p for p in set(before) | set(after)
                                 if before.get(p) != after.get(p))
                raise GateError('traits changed over the %s restart on %s'
                                % (name, ', '.join(changed)))
            results.append({'part': name, 'restart_s': round(restarted, 1),
                            'next_boot_placed_s': round(took, 1),
                            'host': host, 'reporter_log_lines': lines,
                            'traits_unchanged': True})
            print('[faults] %s restarted in %.1f s; next qcow2 boot ACTIVE '
                  'on %s %.1f s later; reporter log lines %s; traits '
                  'unchanged' % (name, restarted, host, took, lines),
                  flush=True)
    finally:
        background.stopping.set()
        background.join(timeout=BOUND + 60)
    return {'bound_s': BOUND, 'faults': results,
            'background_boots': background.results}
