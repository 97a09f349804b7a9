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
* Keystone token requests per reporter per hour, counted in Keystone's
  access log (the reporters' keystoneauth user agent names the program).
"""

import json
import re
import statistics
import time

from gate_cloud import boots
from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import wsgi_server
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
    """(reporter token requests, first and last reporter start, now)."""
    count = 0
    path = wsgi_server.access_log('keystone')
    with open(path, errors='replace') as f:
        for line in f:
            if 'POST /v3/auth/tokens' in line and \
                    ('"%s' % REPORTER_AGENT) in line:
                count += 1
    return count


def reporter_hours(computes):
    """Sum over reporters of how long each has run, in hours."""
    total = 0.0
    now = time.time()
    for c in computes:
        started = services_start_time(reporters.process_name(c['host']))
        total += (now - started) / 3600.0
    return total


def services_start_time(name):
    pid = processes.pid_of(name)
    with open('/proc/%d/stat' % pid) as f:
        start_ticks = int(f.read().rsplit(')', 1)[1].split()[19])
    import os
    hz = os.sysconf('SC_CLK_TCK')
    with open('/proc/uptime') as f:
        uptime = float(f.read().split()[0])
    return time.time() - uptime + start_ticks / hz


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
    count = token_requests()
    hours = reporter_hours(cloud['computes'])
    figures['reporter_token_requests'] = count
    figures['reporter_hours'] = round(hours, 3)
    figures['tokens_per_reporter_hour'] = round(count / hours, 2) \
        if hours else None
    figures['reporter_interval_s'] = reporters.INTERVAL
    inifile.write(layout.path('figures.json'),
                   json.dumps(figures, indent=2), mode=0o644)
    return figures


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
        ('Keystone tokens per reporter per hour',
         figures['tokens_per_reporter_hour']),
    ]
    width = max(len(r[0]) for r in rows)
    return '\n'.join('%-*s  %s' % (width, name, value)
                     for name, value in rows)
