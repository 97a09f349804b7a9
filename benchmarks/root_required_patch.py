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

"""Stock against patched Placement: root_required next to required.

    python -m benchmarks.root_required_patch --providers 1000
    python -m benchmarks.root_required_patch --providers 1000 --shape nested
    python -m benchmarks.root_required_patch --providers 10000 \\
        --backend postgresql --workers 2 --shape flat --runs 5

Starts two real Placement servers side by side on 127.0.0.1: STOCK, the
installed openstack-placement, and PATCHED, the same package copied to a
cache directory with root-required-prefilter.patch applied
(placement_runner.patched)
and put first on the server's PYTHONPATH; the installed package is not
touched. Builds the same fleet in both (the same provider UUIDs; on
PostgreSQL both servers share one database and it is built once): 20% of
the hosts have COMPUTE_IMAGE_TYPE_VMDK, 80% COMPUTE_IMAGE_TYPE_QCOW2 and
COMPUTE_IMAGE_TYPE_RAW on their root; "flat" hosts have VCPU, MEMORY_MB and
DISK_GB on the root, "nested" ones DISK_GB on the root and VCPU and
MEMORY_MB on a child. Then times, alternating between the servers, the
median of --runs GET /allocation_candidates for each query, with and
without limit=1000, and checks that both servers give the same answer
(allocation requests and provider summaries, order aside).

Prints a table; --json FILE writes the figures. Exits 1 with a one-line
error if anything fails or the answers differ.
"""

import argparse
import concurrent.futures
import configparser
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

from placement_runner import embedded  # noqa: E402
from placement_runner import patched as overlay  # noqa: E402

PATCH = overlay.ROOT_REQUIRED_PREFILTER
MICROVERSION = 'placement 1.39'
HEADERS = {'X-Auth-Token': embedded.TOKEN, 'OpenStack-API-Version':
           MICROVERSION, 'Accept': 'application/json'}
BUILD_TIMEOUT = 30  # s, one fleet-building request
QUERY_TIMEOUT = 600  # s, one allocation-candidates request
NAMESPACE = uuid.UUID('6f0b6a52-3a39-4d0e-9d55-0a1b2c3d4e5f')

VMDK = 'COMPUTE_IMAGE_TYPE_VMDK'
QCOW2 = 'COMPUTE_IMAGE_TYPE_QCOW2'
RAW = 'COMPUTE_IMAGE_TYPE_RAW'
VMDK_SHARE = 0.2
RESOURCES = 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:5'
LIMIT = 1000  # Nova's [scheduler] max_placement_results
QUERIES = [
    ('no trait', ''),
    ('required=VMDK', 'required=' + VMDK),
    ('root_required=VMDK', 'root_required=' + VMDK),
    ('required=!VMDK', 'required=!' + VMDK),
    ('root_required=!VMDK', 'root_required=!' + VMDK),
    ('root_required=RAW,!VMDK', 'root_required=%s,!%s' % (RAW, VMDK)),
    ('required=QCOW2&root_required=!VMDK',
     'required=%s&root_required=!%s' % (QCOW2, VMDK)),
]
WARM_UPS = 2


class BenchmarkError(Exception):
    pass


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog='python -m benchmarks.root_required_patch',
        description=__doc__.split('\n\n')[2].strip())
    parser.add_argument('--providers', type=int, default=1000,
                        help='hosts in the fleet (default 1000)')
    parser.add_argument('--shape', choices=('flat', 'nested', 'both'),
                        default='both', help='fleet shape (default both)')
    parser.add_argument('--backend', choices=embedded.EmbeddedPlacement
                        .BACKENDS, default='sqlite')
    parser.add_argument('--workers', type=int, default=None,
                        help='API workers for postgresql (default 2)')
    parser.add_argument('--runs', type=int, default=7,
                        help='timed requests per query and server '
                             '(default 7)')
    parser.add_argument('--threads', type=int, default=None,
                        help='client threads building each fleet '
                             '(default 2, or 2 per worker)')
    parser.add_argument('--build-timeout', type=float, default=1800,
                        help='give up building a fleet after this many '
                             'seconds (default 1800)')
    parser.add_argument('--patch', default=PATCH,
                        help='the patch to benchmark (default: %s)'
                             % os.path.relpath(PATCH, REPO))
    parser.add_argument('--cache-dir', default=None,
                        help='where the patched copies are kept (default '
                             '%s)' % overlay.default_cache_dir())
    parser.add_argument('--json', metavar='FILE',
                        help='also write the figures to FILE')
    args = parser.parse_args(argv)
    if args.providers < 5:
        parser.error('--providers must be at least 5')
    if args.runs < 1:
        parser.error('--runs must be at least 1')
    if args.backend == 'postgresql' and args.workers is None:
        args.workers = 2
    if args.threads is None:
        args.threads = 2 * (args.workers or 1)
    return args


def provider_uuid(name):
    return str(uuid.uuid5(NAMESPACE, name))


class Client:
    """One keep-alive session per thread and server."""

    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.session = requests.Session()
        self.session.headers.update(HEADERS)

    def call(self, method, path, body=None, timeout=BUILD_TIMEOUT):
        resp = self.session.request(method, self.endpoint + path, json=body,
                                    timeout=timeout)
        if resp.status_code >= 400:
            raise BenchmarkError('%s %s: %d %s' % (
                method, path.split('?')[0], resp.status_code,
                resp.text[:200].replace('\n', ' ')))
        return resp


def host_traits(index):
    step = round(1 / VMDK_SHARE)
    return [VMDK] if index % step == 0 else [QCOW2, RAW]


def create_host(client, index, shape):
    """One host, as nova-compute would report it."""
    name = 'bench-%05d' % index
    root = provider_uuid(name)
    client.call('POST', '/resource_providers', {'name': name, 'uuid': root})
    compute = {'VCPU': {'total': 32, 'allocation_ratio': 4.0},
               'MEMORY_MB': {'total': 131072}}
    disk = {'DISK_GB': {'total': 2000}}
    if shape == 'flat':
        root_inv = dict(compute, **disk)
    else:
        root_inv = disk
        child = provider_uuid(name + '-numa0')
        client.call('POST', '/resource_providers', {
            'name': name + '-numa0', 'uuid': child,
            'parent_provider_uuid': root})
        client.call('PUT', '/resource_providers/%s/inventories' % child, {
            'resource_provider_generation': 0, 'inventories': compute})
    gen = client.call('PUT', '/resource_providers/%s/inventories' % root, {
        'resource_provider_generation': 0, 'inventories': root_inv,
    }).json()['resource_provider_generation']
    client.call('PUT', '/resource_providers/%s/traits' % root, {
        'resource_provider_generation': gen, 'traits': host_traits(index)})


def build_fleets(servers, size, shape, threads, timeout):
    """The same fleet in every server, at the same time."""
    start = time.monotonic()
    deadline = start + timeout
    pools = []
    try:
        for server in servers:
            pool = concurrent.futures.ThreadPoolExecutor(threads)
            clients = {}

            def work(index, endpoint=server.endpoint, clients=clients):
                key = threading.get_ident()
                if key not in clients:
                    clients[key] = Client(endpoint)
                create_host(clients[key], index, shape)

            pools.append((pool, [pool.submit(work, i) for i in range(size)]))
        done = 0
        for _pool, futures in pools:
            for future in futures:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BenchmarkError(
                        'building the %s fleet of %d took over %.0f s '
                        '(--build-timeout)' % (shape, size, timeout))
                future.result(timeout=left)
                done += 1
                if done % 500 == 0:
                    sys.stderr.write('\rbuilding %s fleet: %d/%d hosts'
                                     % (shape, done, size * len(servers)))
    except concurrent.futures.TimeoutError:
        raise BenchmarkError(
            'building the %s fleet of %d took over %.0f s (--build-timeout)'
            % (shape, size, timeout)) from None
    finally:
        for pool, futures in pools:
            for future in futures:
                future.cancel()
            pool.shutdown(wait=True)
    sys.stderr.write('\n')
    return time.monotonic() - start


def canonical(body):
    """An answer with every list in a canonical order."""
    def sort_lists(value):
        if isinstance(value, dict):
            return {k: sort_lists(v) for k, v in value.items()}
        if isinstance(value, list):
            items = [sort_lists(v) for v in value]
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
        return value
    return {'allocation_requests': sort_lists(body['allocation_requests']),
            'provider_summaries': sort_lists(body['provider_summaries'])}


def same_answer(stock, patched, limit, full):
    """Whether two answers agree. Beyond ``limit`` the servers may each
    return a different subset; then each must be a valid part of the full
    answer (``full``: the stock answer without limit)."""
    if stock == patched:
        return True
    if limit is None or len(full['allocation_requests']) <= limit:
        return False
    for body in (stock, patched):
        if len(body['allocation_requests']) != limit:
            return False
        wanted = {json.dumps(a, sort_keys=True)
                  for a in full['allocation_requests']}
        if any(json.dumps(a, sort_keys=True) not in wanted
               for a in body['allocation_requests']):
            return False
        for rp, summary in body['provider_summaries'].items():
            if full['provider_summaries'].get(rp) != summary:
                return False
    return True


def measure(clients, runs):
    """[(query name, limit, {server: median ms}, candidates)]."""
    rows = []
    full = {}
    for limit in (None, LIMIT):
        for name, params in QUERIES:
            query = '/allocation_candidates?' + '&'.join(
                p for p in (RESOURCES, params,
                            'limit=%d' % limit if limit else '') if p)
            answers, samples = {}, {label: [] for label in clients}
            order = list(clients.items())
            for i in range(WARM_UPS + runs):
                order.reverse()  # neither server is always the first
                for label, client in order:
                    start = time.perf_counter()
                    resp = client.call('GET', query, timeout=QUERY_TIMEOUT)
                    elapsed = (time.perf_counter() - start) * 1000
                    if i >= WARM_UPS:
                        samples[label].append(elapsed)
                    if i == 0:
                        answers[label] = canonical(resp.json())
            if limit is None:
                full[name] = answers['stock']
            if not same_answer(answers['stock'], answers['patched'], limit,
                               full[name]):
                raise BenchmarkError(
                    'stock and patched Placement answer %s differently'
                    % urllib.parse.unquote(query))
            rows.append({
                'query': name, 'limit': limit,
                'candidates': len(answers['stock']['allocation_requests']),
                'ms': {label: round(statistics.median(s), 1)
                       for label, s in samples.items()},
                'min_ms': {label: round(min(s), 1)
                           for label, s in samples.items()}})
            sys.stderr.write('.')
            sys.stderr.flush()
    sys.stderr.write('\n')
    return rows


def check_overlay(path):
    """The overlay really is what a server started with it imports."""
    env = dict(os.environ, PYTHONPATH=path)
    out = subprocess.run(
        [sys.executable, '-c', 'import placement; print(placement.__file__)'],
        env=env, capture_output=True, text=True, timeout=60).stdout.strip()
    if not out.startswith(path + os.sep):
        raise BenchmarkError('the patched copy at %s is not imported first '
                             '(got %s)' % (path, out or 'nothing'))


def database_url(server):
    """The database a running embedded Placement serves."""
    conf = configparser.ConfigParser(interpolation=None)
    conf.read(os.path.join(server.workdir, 'placement.conf'))
    return conf.get('placement_database', 'connection')


def run_shape(args, shape, overlay_path):
    """On SQLite each server has its own database and the fleet is built
    in both; on PostgreSQL the patched server serves the stock one's
    database, so the fleet is built once and the data is the same."""
    pythonpath = os.environ.get('PYTHONPATH')
    stock_path = os.pathsep.join(p for p in (REPO, pythonpath) if p)
    envs = {'stock': {'PYTHONPATH': stock_path},
            'patched': {'PYTHONPATH': overlay_path + os.pathsep + stock_path}}
    shared = args.backend == 'postgresql'
    servers = {}
    try:
        for label, env in envs.items():
            if shared and servers:
                servers[label] = embedded.EmbeddedPlacement(
                    database_url=database_url(servers['stock']),
                    workers=args.workers, env=env)
            else:
                servers[label] = embedded.EmbeddedPlacement(
                    backend=args.backend, workers=args.workers, env=env)
            servers[label].start()
        build_s = build_fleets(
            [servers['stock']] if shared else list(servers.values()),
            args.providers, shape, args.threads, args.build_timeout)
        clients = {label: Client(s.endpoint) for label, s in servers.items()}
        rows = measure(clients, args.runs)
    finally:
        # The patched server first: it may be using the stock one's
        # database.
        for server in reversed(list(servers.values())):
            server.stop()
    return {'shape': shape, 'build_seconds': round(build_s, 1),
            'rows': rows}


def table(args, results):
    lines = ['providers: %d, backend: %s%s, median (and min) of %d, ms'
             % (args.providers, args.backend,
                ' (%d workers)' % args.workers if args.workers else '',
                args.runs)]
    for result in results:
        lines.append('')
        lines.append('%s fleet (built in %.0f s)' % (
            result['shape'], result['build_seconds']))
        lines.append('| query | limit | candidates | stock | patched | '
                     'patched/stock | stock min | patched min |')
        lines.append('|---|---|---|---|---|---|---|---|')
        for row in result['rows']:
            stock, patched = row['ms']['stock'], row['ms']['patched']
            lines.append('| %s | %s | %d | %.1f | %.1f | %.2f | %.1f | %.1f |'
                         % (row['query'], row['limit'] or '-',
                            row['candidates'], stock, patched,
                            patched / stock, row['min_ms']['stock'],
                            row['min_ms']['patched']))
        ms = {(r['query'], r['limit']): r['ms'] for r in result['rows']}
        for limit in (None, LIMIT):
            root = ms[('root_required=VMDK', limit)]
            plain = ms[('required=VMDK', limit)]
            lines.append(
                'root_required=VMDK / required=VMDK%s: stock %.2f, '
                'patched %.2f' % (' (limit=%d)' % limit if limit else '',
                                  root['stock'] / plain['stock'],
                                  root['patched'] / plain['patched']))
    return '\n'.join(lines)


def main(argv=None):
    args = parse_args(argv)
    try:
        overlay_path = overlay.patched_placement_path(args.patch,
                                                      args.cache_dir)
        check_overlay(overlay_path)
        shapes = ('flat', 'nested') if args.shape == 'both' else (args.shape,)
        results = [run_shape(args, shape, overlay_path) for shape in shapes]
    except (BenchmarkError, overlay.OverlayError,
            embedded.EmbeddedPlacementError, requests.RequestException,
            subprocess.SubprocessError, OSError) as exc:
        print('benchmark: error: %s' % exc, file=sys.stderr)
        return 1
    print(table(args, results))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'providers': args.providers, 'backend': args.backend,
                       'workers': args.workers, 'runs': args.runs,
                       'python': platform.python_version(),
                       'results': results}, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
