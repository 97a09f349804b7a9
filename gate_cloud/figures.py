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

"""The figures, measured on the running cloud in the same run.

* median API-to-ACTIVE time over BOOTS boots, filters on and off (ratio;
  goal <= 1.05);
* nova-scheduler's resident memory, all its processes (parent and
  workers), after those boots, filters on and off;
* Keystone tokens per reporter per hour, steady: Keystone's own record of
  each reporter user's authentications (``keystone_audit.py``), renewals
  only: the tokens each reporter process got after its first, over the
  time from its first to its last. Counted from process start, the
  start-up token dominates a short run; Keystone's tokens here live
  ``keystone.TOKEN_EXPIRATION`` seconds, so every reporter renews at least
  once in a run (about 480 s after it starts), and the rate at another
  lifetime follows from it
  (keystoneauth1 renews a token two minutes before it ends: about 3600 /
  (lifetime - 120) an hour). The gate fails when a reporter renews more
  often than that (a token per request, per cycle).
"""

import json
import re
import statistics

from gate_cloud import boots
from gate_cloud import inifile
from gate_cloud import keystone_audit
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import wsgi_server
from gate_cloud.services import ironic_compute
from gate_cloud.services import keystone
from gate_cloud.services import nova_compute
from gate_cloud.services import nova_scheduler
from gate_cloud.services import reporters

BOOTS = 10
GOAL_RATIO = 1.05
REPORTER_AGENT = 'virt-capabilities'
_STAMP = re.compile(r'\[(\d{2}/\w{3}/\d{4}:\d{2}:\d{2}:\d{2}) ')


def boot_times(admin, image_id, label):
    times, hosts = [], []
    for n in range(BOOTS):
        took, server = boots.boot(admin, 'fig-%s-%d' % (label, n), image_id)
        if server['status'] != 'ACTIVE':
            raise processes.GateError('figure boot %s-%d ended in %s: %s' % (
                label, n, server['status'], server.get('fault')))
        times.append(took)
        hosts.append(boots.host_of(server))
        boots.delete(admin, server['id'])
    return times, hosts


def scheduler_rss_mib():
    pid = processes.pid_of(nova_scheduler.NAME)
    pids = processes.group_pids(pid)
    return round(processes.rss_kib(pids) / 1024, 1), len(pids)


def token_requests():
    """How many tokens the reporters asked Keystone for (its access log:
    the reporters' keystoneauth1 user agent names the program)."""
    count = 0
    path = wsgi_server.access_log('keystone')
    with open(path, errors='replace') as f:
        for line in f:
            if 'POST /v3/auth/tokens' in line and \
                    ('"%s' % REPORTER_AGENT) in line:
                count += 1
    return count


def reporter_users():
    """{Keystone user: reporter process name} of every reporter."""
    out = {reporters.user(c['host']): reporters.process_name(c['host'])
           for c in nova_compute.COMPUTES}
    out[ironic_compute.REPORTER_USER] = ironic_compute.REPORTER
    return out


def steady_token_rate(tokens, started, lifetime=keystone.TOKEN_EXPIRATION,
                      interval=reporters.INTERVAL):
    """The steady rate from renewals only.

    ``tokens``: {user: epoch seconds of each token Keystone gave it};
    ``started``: {user: when its reporter process started}. Each
    reporter's tokens since its process started: the first is its
    start-up token, each later one a renewal, ended by the time since the
    token before it. Returns a dict: ``per_hour`` (renewals over the
    time they took, all reporters, per reporter per hour; None without a
    renewal), ``renewals``, ``hours``, ``shortest_s`` (the shortest time
    between two tokens), ``floor_s`` (what a renewal may not come sooner
    than: a token's life less keystoneauth1's two minutes and one
    cycle) and ``too_soon`` (reporters that renewed sooner)."""
    renewals, seconds, shortest, too_soon = 0, 0.0, None, []
    floor = lifetime - 120 - interval
    for user, times in sorted(tokens.items()):
        mine = sorted(t for t in times if t >= started.get(user, 0) - 1)
        gaps = [b - a for a, b in zip(mine, mine[1:], strict=False)]
        renewals += len(gaps)
        seconds += sum(gaps)
        if gaps:
            shortest = min([shortest] + gaps if shortest else gaps)
            if min(gaps) < floor:
                too_soon.append(user)
    return {'per_hour': round(renewals / (seconds / 3600.0), 2)
            if seconds else None,
            'renewals': renewals, 'hours': round(seconds / 3600.0, 3),
            'shortest_s': round(shortest, 1) if shortest else None,
            'floor_s': floor, 'too_soon': too_soon, 'lifetime_s': lifetime}


def run(cloud, ctx, images):
    """``cloud`` is cloud.json's dict, ``ctx`` the running cloud."""
    admin = ctx.admin
    figures = {}
    # Filters off first, then on again (the cloud is left as it runs).
    for state, on in (('off', False), ('on', True)):
        nova_scheduler.set_filters(ctx, on)
        times, hosts = boot_times(admin, images['raw'], state)
        rss, nproc = scheduler_rss_mib()
        figures['boots_%s' % state] = {
            'seconds': [round(t, 2) for t in times],
            'median_s': round(statistics.median(times), 2),
            'hosts': hosts}
        figures['scheduler_rss_mib_%s' % state] = rss
        figures['scheduler_processes_%s' % state] = nproc
        print('[figures] filters %s: median boot %.2f s over %d; '
              'nova-scheduler %d processes, %.1f MiB resident'
              % (state, statistics.median(times), BOOTS, nproc, rss),
              flush=True)
    figures['boot_ratio_on_off'] = round(
        figures['boots_on']['median_s'] / figures['boots_off']['median_s'], 3)
    figures['boot_ratio_goal'] = GOAL_RATIO
    figures['scheduler_rss_delta_mib'] = round(
        figures['scheduler_rss_mib_on'] - figures['scheduler_rss_mib_off'], 1)
    users = reporter_users()
    tokens = {user: times for user, times in keystone_audit.by_user(
        a for a in keystone_audit.read()
        if a.program == REPORTER_AGENT).items() if user in users}
    started = {user: processes.started_at(name)
               for user, name in users.items()}
    steady = steady_token_rate(tokens, started)
    figures['reporter_token_requests'] = token_requests()
    figures['reporter_tokens'] = steady
    figures['tokens_per_reporter_hour'] = steady['per_hour']
    figures['reporter_interval_s'] = reporters.INTERVAL
    inifile.write(layout.path('figures.json'),
                   json.dumps(figures, indent=2), mode=0o644)
    return figures


def problems(figures):
    """What in the figures fails the gate: a reporter renewing its token
    more often than once a token lifetime, or no renewal to measure."""
    steady = figures['reporter_tokens']
    out = []
    if steady['too_soon']:
        out.append('reporter(s) %s renewed a Keystone token sooner than %d s '
                   'after the last (tokens live %d s): more than one token '
                   'per token lifetime' % (', '.join(steady['too_soon']),
                                           steady['floor_s'],
                                           steady['lifetime_s']))
    if steady['per_hour'] is None:
        out.append('no reporter renewed its Keystone token (tokens live %d '
                   's): the run was too short to measure the steady rate'
                   % steady['lifetime_s'])
    return out


def table(figures):
    rows = [
        ('median boot, filters off (s)', figures['boots_off']['median_s']),
        ('median boot, filters on (s)', figures['boots_on']['median_s']),
        ('ratio on/off (goal <= %.2f)' % GOAL_RATIO,
         figures['boot_ratio_on_off']),
        ('nova-scheduler RSS, filters off (MiB)',
         figures['scheduler_rss_mib_off']),
        ('nova-scheduler RSS, filters on (MiB)',
         figures['scheduler_rss_mib_on']),
        ('Keystone tokens per reporter per hour (steady: renewals, '
         '%d s tokens)' % figures['reporter_tokens']['lifetime_s'],
         figures['tokens_per_reporter_hour']),
    ]
    width = max(len(r[0]) for r in rows)
    return '\n'.join('%-*s  %s' % (width, name, value)
                     for name, value in rows)
