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

"""Rare architectures under Nova's max_placement_results: the image-metadata
prefilter against ImagePropertiesFilter alone.

    python -m benchmarks.rare_architectures     # 10,000 hosts, PostgreSQL
    python -m benchmarks.rare_architectures --hosts 2000 --backend sqlite

One fleet on a real Placement: 1% aarch64 hosts (HW_ARCH_AARCH64), 0.1%
ppc64le, 0.05% s390x, the rest x86_64, each with nova-compute's own traits;
the rare ones are built last, as hosts added to an existing cloud are. For
an image of each rare architecture it asks, ``--asks`` times, with Nova's
``limit=1000``:

- **ImagePropertiesFilter alone**: no trait in the query; the scheduler
  keeps the candidates whose host has the image's architecture, as the host
  filter would. An answer with none left is a "No valid host" although
  fitting hosts exist.
- **the prefilter**: the request filter's own constraint
  (``root_required=!HW_ARCH_Y,...``: every other architecture forbidden),
  built by ``ImageMetadataPrefilter``.

On PostgreSQL both run against Placement's default candidate order and a
second API service on the same database with
``randomize_allocation_candidates = True`` (SQLite: default order only).
Also timed: the request filter's own cost per call, and each query's median
latency. Prints a table; ``--json`` writes the figures. Exits 1 with one
line if anything fails.
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
import timeit

import os_traits

from benchmarks.scale import build as scale_build
from benchmarks.scale import queries
from benchmarks.scale import shapes
from image_type_common import image_metadata
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import image_metadata_prefilter
from placement_runner import embedded
from placement_runner import postgres

RESOURCES = shapes.RESOURCES
#: Architecture -> share of the fleet; x86_64 takes the rest.
RARE = {'aarch64': 0.01, 'ppc64le': 0.001, 's390x': 0.0005}
ARCH_TRAIT = {'x86_64': 'HW_ARCH_X86_64', 'aarch64': 'HW_ARCH_AARCH64',
              'ppc64le': 'HW_ARCH_PPC64LE', 's390x': 'HW_ARCH_S390X'}
LIMIT = queries.NOVA_LIMIT


class BenchmarkError(Exception):
    pass


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog='python -m benchmarks.rare_architectures')
    parser.add_argument('--hosts', type=int, default=10000)
    parser.add_argument('--backend', choices=('postgresql', 'sqlite'),
                        default='postgresql')
    parser.add_argument('--workers', type=int, default=2,
                        help='API workers on PostgreSQL (default 2)')
    parser.add_argument('--asks', type=int, default=50,
                        help='asks per architecture and variant (default 50)')
    parser.add_argument('--runs', type=int, default=7,
                        help='timed runs per query (default 7)')
    parser.add_argument('--build-processes', type=int,
                        default=scale_build.PROCESSES,
                        help='client processes the fleet is built from '
                             '(default %d)' % scale_build.PROCESSES)
    parser.add_argument('--json', default='benchmarks/results/'
                        'image_metadata.json')
    args = parser.parse_args(argv)
    if min(args.hosts, args.workers, args.asks, args.runs,
           args.build_processes) < 1:
        parser.error('counts must be at least 1')
    if args.backend == 'sqlite' and args.workers != 2:
        parser.error('--workers is for PostgreSQL')
    return args


def arches(hosts):
    """The architecture of each host, in build order (rare ones last)."""
    rare = [arch for arch, share in RARE.items()
            for _ in range(max(1, round(hosts * share)))]
    if len(rare) >= hosts:
        raise BenchmarkError('--hosts %d is too small for the rare '
                             'architectures (%d hosts)' % (hosts, len(rare)))
    return ['x86_64'] * (hosts - len(rare)) + rare


def build(placement, host_arches,
          processes=scale_build.PROCESSES):
    """{uuid: arch}, and the seconds it took (the scale benchmark's
    builder: same inventory, nova-compute's own traits)."""
    items = [(i, 'arch-%05d' % i, {os_traits.COMPUTE_NODE, ARCH_TRAIT[arch]})
             for i, arch in enumerate(host_arches)]
    start = time.perf_counter()
    uuids = scale_build.create(placement, [  # the rare ones added last
        [it for it in items if host_arches[it[0]] == 'x86_64'],
        [it for it in items if host_arches[it[0]] != 'x86_64']], processes)
    return ({uuids[i]: arch for i, arch in enumerate(host_arches)},
            time.perf_counter() - start)


def prefilter():
    """The request filter nova-scheduler would run, every family on."""
    return image_metadata_prefilter.ImageMetadataPrefilter(
        settings.FilterSettings.defaults(image_metadata_families=tuple(
            image_metadata.NAMES)))


def spec_for(arch):
    return our_filters.RequestSpec.for_boot(
        'raw', RESOURCES, properties={'hw_architecture': arch})


def query_strings(arch):
    """{variant: query string} for a boot of an ``arch`` image."""
    plain = our_filters.build(spec_for(arch))
    filtered = spec_for(arch)
    prefilter()(None, filtered)
    return {'image_properties_filter': plain + '&limit=%d' % LIMIT,
            'prefilter': our_filters.build(filtered)
            + '&limit=%d' % LIMIT}


def fitting(body, host_arch, arch):
    """The candidates ImagePropertiesFilter would keep."""
    return {rp for rp in our_filters.root_providers(body)
            if host_arch.get(rp) == arch}


def ask(placements, host_arch, asks):
    """False "No valid host" counts per architecture, order and variant."""
    results = {}
    for arch in RARE:
        rare = sum(1 for a in host_arch.values() if a == arch)
        row = {'hosts': rare, 'expected_rate_pct_if_random': round(
            100 * queries.miss_probability(len(host_arch), rare, LIMIT), 3)}
        for order, placement in placements.items():
            client = placement.client()
            for variant, qs in query_strings(arch).items():
                misses = wrong = 0
                for _ in range(asks):
                    body = client.get_allocation_candidates(qs)
                    roots = set(our_filters.root_providers(body))
                    kept = fitting(body, host_arch, arch)
                    misses += not kept
                    if variant == 'prefilter':
                        wrong += len(roots - kept)
                row['%s/%s' % (order, variant)] = {
                    'no_valid_host': misses, 'asks': asks,
                    'rate_pct': round(100.0 * misses / asks, 1),
                    'wrong_hosts': wrong}
        results[arch] = row
    return results


def latencies(placement, runs):
    client = placement.client()
    result = {}
    for arch in ('x86_64', *RARE):
        for variant, qs in query_strings(arch).items():
            median, _ = queries.timed(
                lambda qs=qs: client.get_allocation_candidates(qs), runs)
            result['%s/%s' % (arch, variant)] = median
    return result


def filter_cost(calls=20000):
    """Microseconds per request-filter call, best of 5 batches."""
    one = prefilter()
    properties = {'hw_architecture': 'aarch64', 'hw_disk_bus': 'virtio',
                  'hw_vif_model': 'virtio', 'hw_video_model': 'virtio'}

    def call():
        one(None, our_filters.RequestSpec.for_boot(
            'raw', RESOURCES, properties=properties))
    batches = timeit.repeat(call, number=calls, repeat=5)
    return round(min(batches) / calls * 1e6, 2)


@contextlib.contextmanager
def placements(backend, workers):
    """{'default_order': placement[, 'randomized': placement]}."""
    if backend == 'sqlite':
        with embedded.EmbeddedPlacement() as placement:
            yield {'default_order': placement}
        return
    where = tempfile.mkdtemp(prefix='bench-arch-postgres-')
    database = postgres.PrivatePostgres(where)
    try:
        url = database.start()
        with embedded.EmbeddedPlacement(database_url=url,
                                        workers=workers) as placement, \
                embedded.EmbeddedPlacement(database_url=url, workers=1,
                                           options=[
                    'placement.randomize_allocation_candidates=True']) \
                as randomized:
            yield {'default_order': placement, 'randomized': randomized}
    finally:
        database.stop()
        shutil.rmtree(where, ignore_errors=True)


def say(text):
    print(text, file=sys.stderr, flush=True)


def run(args):
    host_arches = arches(args.hosts)
    result = {'hosts': args.hosts, 'backend': args.backend,
              'limit': LIMIT, 'machine': {
                  'cpus': os.cpu_count(), 'python': platform.python_version()}}
    result['filter_call_us'] = filter_cost()
    with placements(args.backend, args.workers) as servers:
        host_arch, seconds = build(servers['default_order'], host_arches,
                                   args.build_processes)
        result['build_seconds'] = round(seconds, 1)
        say('fleet of %d built in %.0f s' % (args.hosts, seconds))
        result['no_valid_host'] = ask(servers, host_arch, args.asks)
        result['latency_ms'] = latencies(servers['default_order'], args.runs)
    return result


def table(result):
    lines = ['%d hosts, %s, limit=%d; request filter %.2f us per call'
             % (result['hosts'], result['backend'], result['limit'],
                result['filter_call_us']),
             '| image arch | hosts | order | ImagePropertiesFilter alone: '
             'No valid host | prefilter: No valid host | expected if random '
             '|', '|---|---|---|---|---|---|']
    for arch, row in result['no_valid_host'].items():
        for order in ('default_order', 'randomized'):
            alone = row.get(order + '/image_properties_filter')
            if alone is None:
                continue
            pre = row[order + '/prefilter']
            lines.append('| %s | %d | %s | %d of %d | %d of %d | %s%% |' % (
                arch, row['hosts'], order, alone['no_valid_host'],
                alone['asks'], pre['no_valid_host'], pre['asks'],
                row['expected_rate_pct_if_random']))
    lines.append('latency, median ms: ' + ', '.join(
        '%s %.1f' % item for item in result['latency_ms'].items()))
    return '\n'.join(lines)


def main(argv=None):
    args = parse_args(argv)
    try:
        result = run(args)
        for arch, row in result['no_valid_host'].items():
            for key, cell in row.items():
                if key.endswith('/prefilter') and (cell['no_valid_host'] or
                                                   cell['wrong_hosts']):
                    raise BenchmarkError('the prefilter found no host or a '
                                         'wrong one for %s (%s)' % (arch, key))
    except Exception as exc:  # noqa: BLE001 - one line, whatever failed
        first = (str(exc).splitlines() or [repr(exc)])[0]
        print('benchmark failed: %s' % first, file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, 'w') as f:
        json.dump(result, f, indent=2, sort_keys=True)
    print(table(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
