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

"""``python -m benchmarks.scale``: the scale benchmarks, side by side.

For each backend and fleet size, on a fresh Placement: build the fleet
concurrently, the start-up storm (first start, then a restart with
everything already in sync), (a)/(c) latencies; on PostgreSQL also (b) the
``max_placement_results`` effect and (d) scheduler throughput. Writes JSON,
a table, and the latency plot (PNG).

``--placement-patch root-required-prefilter`` adds a patched Placement on
the same database to the latency step: every query is timed against both,
taking turns, and their answers are compared. ``--shape nested`` builds
hosts with a child provider; ``--steps latency`` runs only the latency
step (the fleet is then built with its image traits).
"""

import argparse
import contextlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time

from benchmarks import root_required_patch
from benchmarks.scale import build
from benchmarks.scale import plot
from benchmarks.scale import queries
from benchmarks.scale import shapes
from benchmarks.scale import storm
from benchmarks.scale import throughput
from placement_runner import embedded
from placement_runner import patched as patched_mod
from placement_runner import postgres

#: What can run after the build, in this order; every one by default.
STEPS = ('storm', 'latency', 'limit', 'throughput')
#: Only on PostgreSQL (a second API service, concurrent schedulers).
POSTGRESQL_ONLY = ('limit', 'throughput')


def _sizes(text):
    try:
        sizes = [int(s) for s in text.split(',') if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError('expected sizes like 1000,5000')
    if any(s < 10 for s in sizes):
        raise argparse.ArgumentTypeError('every size must be at least 10')
    return sizes


def parse_args(argv):
    parser = argparse.ArgumentParser(prog='python -m benchmarks.scale',
                                     description=__doc__.split('\n')[0])
    parser.add_argument('--sizes', type=_sizes, default=[1000, 5000, 10000],
                        help='fleet sizes on PostgreSQL (default '
                             '1000,5000,10000)')
    parser.add_argument('--sqlite-sizes', type=_sizes, default=[1000, 5000],
                        help='fleet sizes on SQLite, side by side '
                             '(default 1000,5000; "" for none)')
    parser.add_argument('--workers', type=int, default=4,
                        help='gunicorn API workers (default 4)')
    parser.add_argument('--runs', type=int, default=7,
                        help='timed runs per latency (default 7)')
    parser.add_argument('--asks', type=int, default=100,
                        help='ploop boots asked for in (b) (default 100)')
    parser.add_argument('--boots', type=int, default=40,
                        help='boots per throughput measurement (default 40)')
    parser.add_argument('--concurrency', default='1,4,8',
                        help='concurrent schedulers (default 1,4,8)')
    parser.add_argument('--storm-processes', type=int, default=4,
                        help='client processes the storm\'s threads are '
                             'spread over (default 4)')
    parser.add_argument('--build-processes', type=int,
                        default=build.PROCESSES,
                        help='client processes the fleet is built from '
                             '(default %d)' % build.PROCESSES)
    parser.add_argument('--steps', default=','.join(STEPS),
                        help='what to run after building the fleet, of %s '
                             '(default all; limit and throughput on '
                             'PostgreSQL only). Without storm the fleet is '
                             'built with its image traits.' % ', '.join(STEPS))
    parser.add_argument('--shape', choices=shapes.SHAPES, default='flat',
                        help='flat (default): one provider per host; '
                             'nested: DISK_GB and the traits on the root, '
                             'VCPU and MEMORY_MB on a child (not with the '
                             'throughput step, which claims on the root)')
    patched_mod.add_argument(parser).help += (
        ' The latency step then times a second Placement, patched, on the '
        'same database beside the stock one and compares their answers.')
    parser.add_argument('--json', default='benchmarks/results/scale.json')
    parser.add_argument('--plot', default='benchmarks/results/scale.png')
    args = parser.parse_args(argv)
    args.steps = [s.strip() for s in args.steps.split(',') if s.strip()]
    unknown = sorted(set(args.steps) - set(STEPS))
    if unknown or not args.steps:
        parser.error('--steps takes some of %s, not %s'
                     % (','.join(STEPS), ','.join(unknown) or 'nothing'))
    if args.shape == 'nested' and 'throughput' in args.steps:
        parser.error('--shape nested: the throughput step claims on the '
                     'root provider, which has no VCPU; leave it out of '
                     '--steps')
    if args.placement_patch:
        if 'latency' not in args.steps:
            parser.error('--placement-patch is measured in the latency '
                         'step; add it to --steps')
        try:
            args.placement_patch_file = patched_mod.patch_file(
                args.placement_patch)
            # Built (or found in the cache) now, not after a fleet.
            patched_mod.patched_placement_path(args.placement_patch_file)
        except patched_mod.OverlayError as exc:
            parser.error('--placement-patch: %s' % exc)
    try:
        args.concurrency = [int(k) for k in args.concurrency.split(',')]
    except ValueError:
        parser.error('--concurrency takes numbers like 1,4,8')
    if min(args.concurrency) < 1 or args.workers < 1 or args.runs < 1 or \
            args.boots < 1 or args.asks < 1 or args.storm_processes < 1 or \
            args.build_processes < 1:
        parser.error('counts must be at least 1')
    return args


@contextlib.contextmanager
def fresh_placement(backend, workers, options=()):
    """A fresh Placement; on PostgreSQL also the database's URL, so a
    second API service with other options can serve the same data."""
    if backend == 'sqlite':
        with embedded.EmbeddedPlacement() as placement:
            yield placement, None
        return
    where = tempfile.mkdtemp(prefix='bench-postgres-')
    database = postgres.PrivatePostgres(where)
    try:
        url = database.start()
        with embedded.EmbeddedPlacement(database_url=url, workers=workers,
                                        options=options) as placement:
            yield placement, url
    finally:
        database.stop()
        shutil.rmtree(where, ignore_errors=True)


def say(text):
    print(text, file=sys.stderr, flush=True)


def patched_placement(backend, placement, url, args):
    """The patched Placement, on the database ``placement`` serves:
    PostgreSQL's, shared; SQLite's file, which the two servers only read
    from here on (the latency step writes nothing)."""
    if url is None:
        url = root_required_patch.database_url(placement)
    return embedded.EmbeddedPlacement(
        database_url=url, patch=args.placement_patch_file,
        workers=args.workers if backend == 'postgresql' else None)


def one_size(backend, size, args):
    result = {'shape': args.shape}
    steps = [s for s in args.steps
             if backend == 'postgresql' or s not in POSTGRESQL_ONLY]
    with fresh_placement(backend, args.workers) as (placement, url):
        nodes, seconds = build.build(placement, size,
                                     processes=args.build_processes,
                                     shape=args.shape,
                                     image_traits='storm' not in steps)
        requests_per_node = 3 if args.shape == 'flat' else 5
        result['build'] = {'seconds': round(seconds, 1),
                           'requests_per_second': round(
                               requests_per_node * size / seconds)}
        say('%s %d %s: fleet built in %.1f s' % (backend, size, args.shape,
                                                 seconds))
        if 'storm' in steps:
            result['storm_first_start'] = storm.storm(
                placement, nodes, args.storm_processes)
            say('%s %d: storm %s' % (backend, size,
                                     result['storm_first_start']))
            result['storm_restart'] = storm.storm(placement, nodes,
                                                  args.storm_processes)
            say('%s %d: restart storm %s' % (backend, size,
                                             result['storm_restart']))
        if 'latency' in steps:
            with contextlib.ExitStack() as stack:
                patched = None
                if args.placement_patch:
                    patched = stack.enter_context(
                        patched_placement(backend, placement, url, args))
                result['latency'] = queries.latencies(placement, nodes,
                                                      args.runs, patched)
            if args.placement_patch:
                result['latency']['patched']['patch'] = args.placement_patch
            say('%s %d: latency %s%s' % (
                backend, size, result['latency']['ratios'],
                ', patched %s, answers identical: %s' % (
                    result['latency']['patched']['ratios'],
                    result['latency']['answers']['identical'])
                if patched else ''))
        if 'limit' in steps:
            randomized = embedded.EmbeddedPlacement(
                database_url=url, workers=1, options=[
                    'placement.randomize_allocation_candidates=True'])
            with randomized:
                result['max_placement_results'] = \
                    queries.false_no_valid_host(
                        {'default_order': placement,
                         'randomized': randomized}, nodes, args.asks)
            say('%s %d: limit effect %s' % (
                backend, size, result['max_placement_results']))
        if 'throughput' in steps:
            result['throughput'] = throughput.throughput(
                placement, args.boots, args.concurrency)
            say('%s %d: throughput %s' % (backend, size,
                                          result['throughput']))
    return result


def versions():
    from importlib import metadata
    names = ('openstack-placement', 'os-traits', 'keystoneauth1', 'requests',
             'gunicorn', 'psycopg2-binary', 'pgserver', 'SQLAlchemy')
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    results = {'machine': {'python': platform.python_version(),
                           'cpus': os.cpu_count(),
                           'platform': platform.platform()},
               'versions': versions(), 'workers': args.workers,
               'limit': queries.NOVA_LIMIT, 'runs': args.runs,
               'shape': args.shape, 'steps': args.steps,
               'placement_patch': args.placement_patch,
               'load_average_at_start': os.getloadavg(), 'backends': {}}
    started = time.monotonic()
    for backend, sizes in (('postgresql', args.sizes),
                           ('sqlite', args.sqlite_sizes)):
        for size in sizes:
            results['backends'].setdefault(backend, {})[str(size)] = \
                one_size(backend, size, args)
    results['seconds'] = round(time.monotonic() - started)
    results['load_average_at_end'] = os.getloadavg()
    latency = 'latency' in args.steps
    for path in (args.json, args.plot) if latency else (args.json,):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(args.json, 'w') as f:
        json.dump(results, f, indent=2)
    if latency:
        plot.write(results, args.plot)
    print(table(results))
    if args.placement_patch:
        print('\n' + patched_table(results))
    print('\nJSON: %s%s' % (args.json,
                            '\nplot: %s' % args.plot if latency else ''))
    different = [
        '%s %s %s' % (backend, size, key)
        for backend, runs in sorted(results['backends'].items())
        for size, run in sorted(runs.items())
        for key, check in run.get('latency', {}).get('answers', {}).get(
            'queries', {}).items() if check['mismatches']]
    if different:
        print('error: answers differ (%s): see "answers" in %s'
              % ('; '.join(different), args.json), file=sys.stderr)
        return 1
    return 0



def table(results):
    lines = ['%-10s %6s | %9s %9s %9s %9s | %6s %5s | %8s %6s %5s %4s %4s'
             % ('backend', 'hosts', 'root_req', 'required', 'sched',
                'sched/rr', 'ovh%', 'build', 'storm s', 'req/n', '409',
                'err', 'lost')]
    for backend, runs in sorted(results['backends'].items()):
        for size in sorted(runs, key=int):
            run = runs[size]
            cells = ['-'] * 4 + ['-']
            lat = run.get('latency')
            if lat:
                cells = ['%.1f' % lat[k]['median_ms'] for k in (
                    'root_required/limit', 'required/limit',
                    'scheduler_side/limit')] + [
                    '%.2fx' % lat['ratios'][
                        'scheduler_side_over_default_limit'],
                    '%.1f' % lat['ratios']['client_overhead_pct']]
            storm_ = run.get('storm_first_start')
            tail = ['-'] * 5
            if storm_:
                tail = ['%.1f' % storm_['seconds_until_all_in_sync'],
                        '%.2f' % storm_['requests_per_node'],
                        storm_['conflicts_409'], storm_['errors'],
                        storm_['image_traits_lost']
                        + storm_['others_traits_lost']]
            lines.append('%-10s %6s | %9s %9s %9s %9s | %6s %5.0f | '
                         '%8s %6s %5s %4s %4s' % (
                             backend, size, *cells, run['build']['seconds'],
                             *tail))
    return '\n'.join(lines)


def patched_table(results):
    """The latency step, stock against patched: median (min) ms."""
    head = ('backend', 'hosts', 'limit', 'root_req stock', 'patched',
            'required stock', 'patched', 'sched stock', 'patched',
            'sched/rr stock', 'patched', 'rr/req stock', 'patched',
            'answers')
    lines = ['shape: %s, patch: %s, median (min) ms of %d runs'
             % (results['shape'], results['placement_patch'],
                results['runs']), ' | '.join(head)]
    for backend, runs in sorted(results['backends'].items()):
        for size in sorted(runs, key=int):
            lat = runs[size].get('latency')
            if not lat or 'patched' not in lat:
                continue
            for scope in ('limit', 'all'):
                row = [backend, size, scope]
                for variant in queries.VARIANTS:
                    for figures in (lat, lat['patched']):
                        cell = figures['%s/%s' % (variant, scope)]
                        row.append('%.0f (%.0f)' % (cell['median_ms'],
                                                    cell['min_ms']))
                for ratio in ('scheduler_side_over_default',
                              'root_required_over_required'):
                    for figures in (lat, lat['patched']):
                        row.append('%.2fx' % figures['ratios'][
                            '%s_%s' % (ratio, scope)])
                row.append('identical' if lat['answers']['identical']
                           else 'DIFFERENT')
                lines.append(' | '.join(str(c) for c in row))
    return '\n'.join(lines)


if __name__ == '__main__':
    sys.exit(main())
