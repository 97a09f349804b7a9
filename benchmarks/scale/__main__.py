"""``python -m benchmarks.scale``: the scale benchmarks, side by side.

For each backend and fleet size, on a fresh Placement: build the fleet
concurrently, the start-up storm (first start, then a restart with
everything already in sync), (a)/(c) latencies; on PostgreSQL also (b) the
``max_placement_results`` effect and (d) scheduler throughput. Writes JSON,
a table, and the latency plot (PNG).
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

from benchmarks.scale import build
from benchmarks.scale import plot
from benchmarks.scale import queries
from benchmarks.scale import storm
from benchmarks.scale import throughput
from placement_runner import embedded
from placement_runner import postgres


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
    parser.add_argument('--json', default='benchmarks/results/scale.json')
    parser.add_argument('--plot', default='benchmarks/results/scale.png')
    args = parser.parse_args(argv)
    try:
        args.concurrency = [int(k) for k in args.concurrency.split(',')]
    except ValueError:
        parser.error('--concurrency takes numbers like 1,4,8')
    if min(args.concurrency) < 1 or args.workers < 1 or args.runs < 1 or \
            args.boots < 1 or args.asks < 1 or args.storm_processes < 1:
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


def one_size(backend, size, args):
    result = {}
    with fresh_placement(backend, args.workers) as (placement, url):
        nodes, seconds = build.build(placement, size)
        result['build'] = {'seconds': round(seconds, 1),
                           'requests_per_second': round(3 * size / seconds)}
        say('%s %d: fleet built in %.1f s' % (backend, size, seconds))
        result['storm_first_start'] = storm.storm(
            placement, nodes, args.storm_processes)
        say('%s %d: storm %s' % (backend, size, result['storm_first_start']))
        result['storm_restart'] = storm.storm(placement, nodes,
                                              args.storm_processes)
        say('%s %d: restart storm %s' % (backend, size,
                                         result['storm_restart']))
        result['latency'] = queries.latencies(placement, nodes, args.runs)
        say('%s %d: latency %s' % (backend, size,
                                   result['latency']['ratios']))
        if url is not None:
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
               'limit': queries.NOVA_LIMIT, 'backends': {}}
    started = time.monotonic()
    for backend, sizes in (('postgresql', args.sizes),
                           ('sqlite', args.sqlite_sizes)):
        for size in sizes:
            results['backends'].setdefault(backend, {})[str(size)] = \
                one_size(backend, size, args)
    results['seconds'] = round(time.monotonic() - started)
    for path in (args.json, args.plot):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(args.json, 'w') as f:
        json.dump(results, f, indent=2)
    plot.write(results, args.plot)
    print(table(results))
    print('\nJSON: %s\nplot: %s' % (args.json, args.plot))
    return 0


def table(results):
    lines = ['%-10s %6s | %9s %9s %9s %9s | %6s %5s | %8s %6s %5s %4s %4s'
             % ('backend', 'hosts', 'root_req', 'required', 'sched',
                'sched/rr', 'ovh%', 'build', 'storm s', 'req/n', '409',
                'err', 'lost')]
    for backend, runs in sorted(results['backends'].items()):
        for size in sorted(runs, key=int):
            run = runs[size]
            lat, storm_ = run['latency'], run['storm_first_start']
            lines.append(
                '%-10s %6s | %9.1f %9.1f %9.1f %8.2fx | %6.1f %5.0f | '
                '%8.1f %6.2f %5d %4d %4d' % (
                    backend, size, lat['root_required/limit']['median_ms'],
                    lat['required/limit']['median_ms'],
                    lat['scheduler_side/limit']['median_ms'],
                    lat['ratios']['scheduler_side_over_default_limit'],
                    lat['ratios']['client_overhead_pct'],
                    run['build']['seconds'],
                    storm_['seconds_until_all_in_sync'],
                    storm_['requests_per_node'], storm_['conflicts_409'],
                    storm_['errors'],
                    storm_['image_traits_lost'] + storm_['others_traits_lost']
                ))
    return '\n'.join(lines)


if __name__ == '__main__':
    sys.exit(main())
