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

"""Measure what the project exists for, side by side, on a real Placement.

1. Filter cost: microseconds per ``require_image_type_support`` call and per
   query build (median of batches).
2. Prefilter vs. scheduler-side filtering for a vmdk image on a mixed fleet:
   (a) this filter, Placement returns only supporting hosts; (b) no trait,
   every candidate returned, then filtered on provider-summary traits the
   way a host filter would; (c) the URL of (a) through bare ``requests``,
   for this client's own overhead. Also ``root_required`` against the
   unsuffixed ``required`` form.
3. Reporter: requests for one unchanged and one changed provider; a
   many-provider re-sync of N unchanged providers against one read each.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

import requests

from benchmarks import counting
from image_type_common import image_types
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import image_type_support
from placement_runner import embedded
from placement_runner import writes
from virt_capabilities import ownership
from virt_capabilities import reporter as reporter_mod

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 5}
INVENTORY = {'VCPU': {'total': 32, 'allocation_ratio': 4.0},
             'MEMORY_MB': {'total': 131072}, 'DISK_GB': {'total': 2000}}
VMWARE = frozenset(image_types.TRAIT_BY_FORMAT[f] for f in ('iso', 'vmdk'))
LIBVIRT = frozenset(image_types.TRAIT_BY_FORMAT[f] for f in (
    'aki', 'ami', 'ari', 'iso', 'qcow2', 'raw'))
VMDK = image_types.TRAIT_BY_FORMAT['vmdk']


def image_type_rule(traits):
    """The reporter as the demo runs it: it keeps the image types."""
    return ownership.OwnerRule(image_types=traits, owns_image_types=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog='python -m benchmarks',
                                     description=__doc__.split('\n')[0])
    parser.add_argument('--providers', type=int, default=1000,
                        help='compute providers in the fleet (default 1000)')
    parser.add_argument('--vmware-share', type=float, default=0.2,
                        help='share of VMware-like providers (default 0.2)')
    parser.add_argument('--runs', type=int, default=15,
                        help='timed runs per Placement measurement')
    parser.add_argument('--calls', type=int, default=20000,
                        help='calls per batch for the filter cost')
    parser.add_argument('--json', default='benchmarks/results/latest.json',
                        help='where to write the JSON results')
    args = parser.parse_args(argv)
    if args.providers < 5 or not 0 < args.vmware_share < 1:
        parser.error('--providers must be >= 5 and --vmware-share in (0, 1)')
    return args


def median_us(func, calls, batches=9):
    per_call = []
    for _ in range(batches):
        start = time.perf_counter()
        func(calls)
        per_call.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(per_call)


def filter_cost(calls):
    image_filter = image_type_support.RequireImageTypeSupport(
        settings.FilterSettings.defaults(image_type_enabled=True))
    specs = [our_filters.RequestSpec.for_boot('vmdk', RESOURCES)
             for _ in range(calls)]

    def call_filter(n):
        for spec in specs[:n]:
            image_filter(None, spec)

    built = our_filters.RequestSpec.for_boot('vmdk', RESOURCES,
                                             root_required={VMDK})

    def build_query(n):
        for _ in range(n):
            our_filters.build(built)

    return {'filter_call_us': round(median_us(call_filter, calls), 3),
            'query_build_us': round(median_us(build_query, calls), 3)}


def build_fleet(client, providers, vmware_share):
    vmware_count = max(1, int(providers * vmware_share))
    uuids, vmware = [], set()
    start = time.perf_counter()
    for i in range(providers):
        is_vmware = i % round(1 / vmware_share) == 0 and \
            len(vmware) < vmware_count
        rp = writes.create_resource_provider(client, 'bench-%05d' % i)
        gen = writes.put_inventories(client, rp['uuid'], rp['generation'],
                                     INVENTORY)['resource_provider_generation']
        client.put_provider_traits(rp['uuid'],
                                   VMWARE if is_vmware else LIBVIRT, gen)
        uuids.append(rp['uuid'])
        if is_vmware:
            vmware.add(rp['uuid'])
        if sys.stderr.isatty():
            sys.stderr.write('\rbuilding fleet: %d/%d' % (i + 1, providers))
    if sys.stderr.isatty():
        sys.stderr.write('\n')
    return uuids, vmware, time.perf_counter() - start


def timed(func, runs):
    samples, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = func()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), result


def roots(body):
    return {rp for req in body['allocation_requests']
            for rp in req['allocations']}


def prefilter_vs_scheduler(placement, client, vmware, runs):
    def query(**traits):
        return our_filters.build(our_filters.RequestSpec.for_boot(
            'vmdk', RESOURCES, **traits))

    with_trait = query(root_required={VMDK})
    # The same trait in the unsuffixed ``required``: a form nova-scheduler
    # never sends, measured for comparison.
    with_required = query(required={VMDK})
    without = query()

    def get(qs):
        resp = client.request('GET', '/allocation_candidates?' + qs)
        return resp.content

    def filtered():
        content = get(with_trait)
        return content, roots(json.loads(content))

    def scheduler_side():
        content = get(without)
        body = json.loads(content)
        summaries = body['provider_summaries']
        keep = {rp for rp in roots(body)
                if VMDK in summaries[rp].get('traits', [])}
        return content, keep

    session = requests.Session()
    headers = {'X-Auth-Token': placement.token,
               'OpenStack-API-Version':
                   'placement %s' % placement.microversion,
               'Accept': 'application/json'}
    url = placement.endpoint + '/allocation_candidates?' + with_trait

    def bare():
        resp = session.get(url, headers=headers, timeout=120)
        resp.raise_for_status()
        return resp.content, roots(resp.json())

    def required_form():
        content = get(with_required)
        return content, roots(json.loads(content))

    results = {}
    for name, func in (('a_prefilter', filtered),
                       ('b_scheduler_side', scheduler_side),
                       ('c_bare_requests', bare),
                       ('a_required_form', required_form)):
        func()  # warm up
        ms, (content, hosts) = timed(func, runs)
        results[name] = {'median_ms': round(ms, 2), 'bytes': len(content),
                         'hosts': len(hosts),
                         'correct': hosts == vmware}
    a, b, c = (results[k]['median_ms'] for k in
               ('a_prefilter', 'b_scheduler_side', 'c_bare_requests'))
    results['ratio_b_over_a'] = round(b / a, 2)
    results['client_overhead_pct'] = round((a / c - 1) * 100, 1)
    results['root_required_over_required'] = round(
        a / results['a_required_form']['median_ms'], 2)
    return results


def reporter_requests(placement, uuids, vmware):
    client = placement.client()
    libvirt = [u for u in uuids if u not in vmware]
    unchanged = reporter_mod.Reporter(client, image_type_rule(LIBVIRT))
    client.negotiate()  # discovery: once per client
    sent = counting.counted(client)
    before = sent.count
    unchanged.sync_provider(libvirt[0])
    one_unchanged = sent.count - before
    before = sent.count
    reporter_mod.Reporter(client, image_type_rule(
        LIBVIRT | {VMDK})).sync_provider(libvirt[1])
    one_changed = sent.count - before
    reporter_mod.Reporter(client, image_type_rule(
        LIBVIRT)).sync_provider(libvirt[1])

    before, start = sent.count, time.perf_counter()
    report = unchanged.sync(libvirt)
    bulk_seconds = time.perf_counter() - start
    bulk_requests = sent.count - before
    before, start = sent.count, time.perf_counter()
    for uuid in libvirt:
        client.get_provider_traits(uuid)
    naive_seconds = time.perf_counter() - start
    return {
        'unchanged_provider_requests': one_unchanged,
        'changed_provider_requests': one_changed,
        'resync_providers': len(libvirt),
        'resync_in_sync_by_query': report.skipped_in_sync,
        'resync_requests': bulk_requests,
        'resync_seconds': round(bulk_seconds, 3),
        'one_read_each_requests': sent.count - before,
        'one_read_each_seconds': round(naive_seconds, 3),
    }


def versions():
    from importlib import metadata
    return {name: metadata.version(name) for name in (
        'openstack-placement', 'os-traits', 'keystoneauth1', 'requests')}


def table(results):
    f, p, r = results['filter'], results['prefilter'], results['reporter']
    lines = [
        'providers: %d (%d VMware-like), fleet built in %.1f s'
        % (results['providers'], results['vmware_providers'],
           results['fleet_seconds']),
        '',
        '1. filter cost: %.2f us per require_image_type_support call, '
        '%.2f us per query build' % (f['filter_call_us'],
                                     f['query_build_us']),
        '',
        '2. vmdk boot, VCPU:1 MEMORY_MB:512 DISK_GB:5',
        '   %-34s %10s %12s %7s %8s' % ('', 'median ms', 'bytes', 'hosts',
                                       'correct'),
    ]
    for key, label in (('a_prefilter', '(a) filter: root_required'),
                       ('a_required_form', '(a\') filter: required form'),
                       ('b_scheduler_side', '(b) all, then host-filtered'),
                       ('c_bare_requests', '(c) URL of (a), bare requests')):
        row = p[key]
        lines.append('   %-34s %10.2f %12d %7d %8s' % (
            label, row['median_ms'], row['bytes'], row['hosts'],
            row['correct']))
    lines += [
        '   b/a = %.2fx; client overhead over bare requests = %.1f%%; '
        'root_required/required = %.2fx' % (
            p['ratio_b_over_a'], p['client_overhead_pct'],
            p['root_required_over_required']),
        '',
        '3. reporter: unchanged provider %d request(s), changed %d; '
        're-sync of %d unchanged: %d requests in %.3f s (one read each: %d '
        'requests in %.3f s)' % (
            r['unchanged_provider_requests'], r['changed_provider_requests'],
            r['resync_providers'], r['resync_requests'], r['resync_seconds'],
            r['one_read_each_requests'], r['one_read_each_seconds']),
    ]
    return '\n'.join(lines)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    results = {'machine': {'python': platform.python_version(),
                           'cpus': os.cpu_count(),
                           'platform': platform.platform()},
               'versions': versions(), 'providers': args.providers}
    results['filter'] = filter_cost(args.calls)
    with embedded.EmbeddedPlacement() as placement:
        client = placement.client()
        uuids, vmware, seconds = build_fleet(client, args.providers,
                                             args.vmware_share)
        results['vmware_providers'] = len(vmware)
        results['fleet_seconds'] = round(seconds, 1)
        results['prefilter'] = prefilter_vs_scheduler(placement, client,
                                                      vmware, args.runs)
        results['reporter'] = reporter_requests(placement, uuids, vmware)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, 'w') as f:
        json.dump(results, f, indent=2)
    print(table(results))
    print('\nJSON: %s' % args.json)
    return 0
