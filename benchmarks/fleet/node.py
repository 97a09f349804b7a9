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

"""The benchmark's steps inside the container: ``python -m
benchmarks.fleet.node STEP``, as root, by devstack's virtualenv's python.

Each step prints ``[fleet]`` lines as it goes and its figures as one JSON
line last (``gate.on_node`` reads it); a failure is one line naming the
step, and exit 1.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

from benchmarks.fleet import gate
from benchmarks.fleet import modes
from benchmarks.fleet import reporters
from benchmarks.fleet import schedlog
from benchmarks.fleet import shape
from benchmarks.fleet import verdict
from benchmarks.fleet import workload

NOVA_CONF = '/etc/nova/nova.conf'
SCHEDULER = 'devstack@n-sch.service'
PLACEMENT = 'devstack@placement-api.service'
PLACEMENT_DIR = '/opt/stack/placement'
PATCH = (gate.PROJECT_DIR +
         '/placement_runner/patches/root-required-prefilter.patch')
NOVA_MANAGE = '/opt/stack/data/venv/bin/nova-manage'
FLAVOR = {'name': 'fleet.tiny', 'ram': 64, 'vcpus': 1, 'disk': 1}
#: How long the nova-computes may take to bring every node into Placement.
FLEET_DEADLINE = 3600
#: nova-scheduler's loggers that write a DEBUG line per host, filter and
#: weigher on every request (a thousand hosts: thousands of lines per
#: boot, which production's INFO does not pay), kept at INFO in every
#: mode. nova.scheduler.manager and the request filters keep their DEBUG
#: lines, which the time per request is read from.
QUIET_LOGGERS = ('nova.scheduler.host_manager=INFO', 'nova.filters=INFO',
                 'nova.weights=INFO', 'nova.scheduler.filters=INFO',
                 'oslo_concurrency.lockutils=INFO')
#: Warm-up boots a mode may make before one is ACTIVE.
WARM_UP_BOOTS = 5
#: The traits the verdict reads from Placement.
JUDGED_TRAITS = tuple(shape.format_trait(f) for f in shape.DRIVER_FORMATS) + (
    shape.RESERVED_TRAIT,)


def say(text):
    print('[fleet] %s' % text, flush=True)


def wait_fleet(nodes):
    """Every node in Placement with its image-type traits; the hosts
    mapped to the cell."""
    cloud = gate.cloud()
    started = time.monotonic()
    counts = shape.node_counts(nodes)
    want = {}
    for group in shape.GROUPS:
        for trait in (shape.format_trait(f) for f in group.formats):
            want.setdefault(trait, set()).update(
                shape.node_names(group.name, counts[group.name]))

    def complete():
        return not reporters.missing(cloud, want)
    gate.wait_for(complete, FLEET_DEADLINE,
                  '%d nodes in Placement with their image types' % nodes)
    seconds = time.monotonic() - started
    gate.node_run([NOVA_MANAGE, '--config-file', NOVA_CONF, 'cell_v2',
                   'discover_hosts'])
    say('%d nodes in Placement with their image-type traits, %.0f s after '
        'stack.sh' % (nodes, seconds))
    return {'nodes': nodes, 'counts': counts, 'ready_s': round(seconds, 1)}


def setup():
    """The workload's flavor and one image of each kind."""
    cloud = gate.cloud()
    flavor = cloud.create_flavor(**FLAVOR)
    images = {}
    for kind in shape.IMAGES:
        images[kind.name] = cloud.upload(
            'fleet-%s' % kind.name, kind.disk_format,
            gate.image_file(kind.disk_format), kind.properties)
    say('flavor %s, images %s' % (flavor, ', '.join(sorted(images))))
    return {'flavor': flavor, 'images': images}


def measure_reporters(nodes, interval, window):
    cloud = gate.cloud()
    figures = reporters.measure(cloud, shape.node_counts(nodes),
                                'fleet-reporter-secret', interval, window)
    say('reporters: %(startup_requests_per_node)s requests per node at '
        'start-up (%(startup_s)s s), %(idle_requests_per_node_per_hour)s '
        'per node per hour idle, %(after_restart_requests_per_node)s per '
        'node after a Placement restart; traits lost %(traits_lost)s'
        % figures)
    if figures['traits_lost']:
        raise gate.FleetError('reporters: %d traits lost: %s' % (
            figures['traits_lost'], figures['traits_lost_detail']))
    return figures


def _patched():
    """Whether Placement's tree has the root_required patch applied: it
    can be taken off again."""
    return subprocess.run(
        ['git', '-c', 'safe.directory=*', '-C', PLACEMENT_DIR, 'apply',
         '--check', '-R', PATCH], capture_output=True,
        timeout=60).returncode == 0


def set_placement(patched, cloud):
    """Placement with or without the patch; restarted if it changes."""
    if _patched() == patched:
        return
    argv = ['git', '-c', 'safe.directory=*', '-C', PLACEMENT_DIR, 'apply']
    gate.node_run(argv + ([] if patched else ['-R']) + [PATCH])
    gate.restart(PLACEMENT)
    gate.wait_for_placement(cloud)
    say('Placement restarted %s the root_required patch'
        % ('with' if patched else 'without'))


def unit_pids(unit):
    """The unit's main process and every descendant."""
    parents = {}
    for stat in pathlib.Path('/proc').glob('[0-9]*/stat'):
        try:
            fields = stat.read_text().rsplit(')', 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    pids = {gate.main_pid(unit)}
    while True:
        more = {p for p, parent in parents.items() if parent in pids} - pids
        if not more:
            return pids
        pids |= more


def cpu_seconds(pids):
    tick = os.sysconf('SC_CLK_TCK')
    total = 0
    for pid in pids:
        try:
            fields = pathlib.Path('/proc/%d/stat' % pid).read_text().rsplit(
                ')', 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


class PeakRss(threading.Thread):
    """nova-scheduler's resident memory, sampled every second."""

    def __init__(self, unit):
        super().__init__(daemon=True)
        self.unit = unit
        self.peak = 0.0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.peak = max(self.peak, gate.rss_mib(self.unit)[0])
            self.done.wait(1.0)


def host_traits(cloud):
    """{node: the judged traits it carries}."""
    out = {}
    for trait in JUDGED_TRAITS:
        for name in reporters.providers_with(cloud, trait):
            out.setdefault(name, set()).add(trait)
    return out


def run_mode(name, nodes, boots, concurrency, setup_figures):
    mode = modes.BY_NAME[name]
    cloud = gate.cloud()
    for section, option, value in mode.settings():
        gate.iniset(NOVA_CONF, section, option, value)
    from oslo_log import log  # devstack's virtualenv
    gate.iniset(NOVA_CONF, 'DEFAULT', 'default_log_levels', ','.join(
        list(log.get_default_log_levels()) + list(QUIET_LOGGERS)))
    set_placement(mode.patched_placement, cloud)
    gate.restart(SCHEDULER)
    images = setup_figures['images']
    flavor = setup_figures['flavor']
    params = workload.database_params()
    # The first boots after a restart wait on the scheduler's start and
    # fill its caches: made, not counted, until one is ACTIVE (at a
    # thousand nodes the conductor's first calls can time out while the
    # restarted scheduler starts).
    for attempt in range(WARM_UP_BOOTS):
        warm = workload.boot_all(cloud, ['raw'], images, flavor,
                                 'fleet-%s-warm%d' % (name, attempt), 1,
                                 params)
        if warm[0]['status'] == 'ACTIVE':
            break
    else:
        raise gate.FleetError('mode %s: no warm-up boot went ACTIVE in %d'
                              % (name, WARM_UP_BOOTS))
    pids = unit_pids(SCHEDULER)
    rss = PeakRss(SCHEDULER)
    rss.start()
    cpu_before = cpu_seconds(pids)
    started = time.time()
    records = workload.boot_all(cloud, shape.boot_sequence(boots), images,
                                flavor, 'fleet-%s' % name, concurrency,
                                params)
    ended = time.time()
    cpu = cpu_seconds(pids) - cpu_before
    rss.done.set()
    rss.join()
    # journald may hold the last lines a moment.
    time.sleep(2)
    wanted = {r['request'] for r in records}
    sched_lines = gate.journal_lines(SCHEDULER, started - 1, ended + 2)
    sched = schedlog.scheduler_times(sched_lines)
    sched_times = [t for r, t in sched.items() if r in wanted]
    own_times = [t for r, t in schedlog.own_filter_times(sched_lines).items()
                 if r in wanted]
    placed = schedlog.placement_times(
        gate.journal_lines(PLACEMENT, started - 1, ended + 2))
    placement_times = [t for r, ts in placed.items() if r in wanted
                       for t in ts]
    traits = host_traits(cloud)
    judged = []
    for record in records:
        node = record['node']
        arch = shape.group_of(node).architecture if node else None
        record['problems'] = verdict.judge(
            record['status'], shape.image_kind(record['kind']),
            traits.get(node, set()) if node else None, arch)
        judged.append(record['problems'])
    wall = ended - started
    figures = {
        'mode': name,
        'about': mode.about,
        'settings': [[s, o, str(v)] for s, o, v in mode.settings()],
        'patched_placement': mode.patched_placement,
        'boots': boots,
        'concurrency': concurrency,
        'wall_s': round(wall, 1),
        'boots_per_min': round(boots / wall * 60, 1),
        'scheduler_ms': schedlog.summary(sched_times),
        'placement_candidates_ms': schedlog.summary(placement_times),
        'own_filters_us': schedlog.summary(own_times, 1e6),
        'api_to_active_s': schedlog.summary(
            [r['seconds'] for r in records if r['status'] == 'ACTIVE'], 1),
        'scheduler_cpu_s': round(cpu, 1),
        'scheduler_cpu_ms_per_boot': round(cpu / boots * 1000, 1),
        'scheduler_cpu_share': round(cpu / wall, 3),
        'scheduler_rss_mib_peak': rss.peak,
        'verdict': verdict.tally(judged),
        'by_kind': _by_kind(records),
    }
    say('%s: scheduler p50/p90/p99 %s/%s/%s ms over %s requests, '
        'candidates p50 %s ms, %s boots/min, wrong: %s' % (
            name, figures['scheduler_ms'].get('p50'),
            figures['scheduler_ms'].get('p90'),
            figures['scheduler_ms'].get('p99'),
            figures['scheduler_ms']['count'],
            figures['placement_candidates_ms'].get('p50'),
            figures['boots_per_min'], figures['verdict']))
    return figures


def _by_kind(records):
    out = {}
    for record in records:
        entry = out.setdefault(record['kind'], {'boots': 0, 'wrong': 0,
                                                'groups': {}})
        entry['boots'] += 1
        entry['wrong'] += bool(record['problems'])
        group = (shape.group_of(record['node']).name if record['node']
                 else 'none')
        entry['groups'][group] = entry['groups'].get(group, 0) + 1
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m benchmarks.fleet.node')
    sub = parser.add_subparsers(dest='step', required=True)
    fleet = sub.add_parser('fleet')
    fleet.add_argument('nodes', type=int)
    sub.add_parser('setup')
    rep = sub.add_parser('reporters')
    rep.add_argument('nodes', type=int)
    rep.add_argument('interval', type=int)
    rep.add_argument('window', type=int)
    mode = sub.add_parser('mode')
    mode.add_argument('name', choices=sorted(modes.BY_NAME))
    mode.add_argument('nodes', type=int)
    mode.add_argument('boots', type=int)
    mode.add_argument('concurrency', type=int)
    mode.add_argument('setup', help='the setup step\'s JSON')
    args = parser.parse_args(argv)
    try:
        if args.step == 'fleet':
            result = wait_fleet(args.nodes)
        elif args.step == 'setup':
            result = setup()
        elif args.step == 'reporters':
            result = measure_reporters(args.nodes, args.interval,
                                       args.window)
        else:
            result = run_mode(args.name, args.nodes, args.boots,
                              args.concurrency, json.loads(args.setup))
    except (gate.GateError, TimeoutError) as exc:
        print('benchmarks.fleet.node %s: %s' % (args.step, exc),
              file=sys.stderr)
        return 1
    print(json.dumps(result), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
