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

"""Ask Placement for hosts the ways a scheduler can, and time it.

(a) a vmdk boot: the prefilter (the trait in ``root_required``, this
filter's default, or in the unsuffixed ``required``) against no trait with
the candidates filtered in the scheduler on their provider-summary traits;
each with Nova's ``limit`` (``[scheduler] max_placement_results``, 1000 by
default) and without. (c) the default URL through bare ``requests``, for
this client's own overhead.

(b) the rare format (ploop) under Nova's limit: how often filtering in the
scheduler finds no host although one exists.
"""

import json
import statistics
import time

import requests

from benchmarks import root_required_patch
from benchmarks.scale import shapes
from image_type_common import image_types
from image_type_filter.diagnostics import our_filters

NOVA_LIMIT = 1000  # [scheduler] max_placement_results' default
VARIANTS = ('root_required', 'required', 'scheduler_side')


def query_string(disk_format, variant, limit=None):
    """The trait in ``variant`` (``root_required``, as nova-scheduler
    sends it, or the unsuffixed ``required``), or none (``scheduler_side``).
    """
    traits = {} if variant == 'scheduler_side' else {
        variant: {image_types.TRAIT_BY_FORMAT[disk_format]}}
    qs = our_filters.build(our_filters.RequestSpec.for_boot(
        disk_format, shapes.RESOURCES, **traits))
    return qs + ('&limit=%d' % limit if limit else '')


def hosts_found(body, variant, trait):
    """The hosts a scheduler would go on with: all roots for the
    prefilter, only those whose summary has the trait otherwise."""
    roots = set(our_filters.root_providers(body))
    if variant != 'scheduler_side':
        return roots
    summaries = body['provider_summaries']
    return {rp for rp in roots if trait in summaries[rp].get('traits', [])}


WARM_UPS = 4  # every API worker has served it once


def timed(func, runs):
    for _ in range(WARM_UPS):
        func()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        result = func()
        samples.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(samples), 2), result


def _alternating(placements, variant, qs, trait, runs, check):
    """Every placement asked the same query in turn (the first one
    alternating), ``WARM_UPS`` then ``runs`` times each; ``check(name,
    size, hosts, body)`` sees every answer, outside the clock.
    Returns {name: [ms]}."""
    asks = {}
    for name, placement in placements.items():
        client = placement.client()
        client.negotiate()  # discovery before the clock starts

        def ask(client=client):
            resp = client.request('GET', '/allocation_candidates?' + qs)
            body = json.loads(resp.content)
            return len(resp.content), hosts_found(body, variant, trait), body
        asks[name] = ask
    samples = {name: [] for name in placements}
    order = list(asks.items())
    for i in range(WARM_UPS + runs):
        order.reverse()  # neither server is always the first
        for name, ask in order:
            start = time.perf_counter()
            size, hosts, body = ask()
            elapsed = (time.perf_counter() - start) * 1000
            if i >= WARM_UPS:
                samples[name].append(elapsed)
            check(name, size, hosts, body)
    return samples


def _ratios(results):
    def ms(key):
        return results[key]['median_ms']

    default = ms('root_required/limit')
    ratios = {
        'scheduler_side_over_default_limit': round(
            ms('scheduler_side/limit') / default, 2),
        'scheduler_side_over_default_all': round(
            ms('scheduler_side/all') / ms('root_required/all'), 2),
        'scheduler_side_over_required_limit': round(
            ms('scheduler_side/limit') / ms('required/limit'), 2),
        'root_required_over_required_limit': round(
            default / ms('required/limit'), 2),
        'root_required_over_required_all': round(
            ms('root_required/all') / ms('required/all'), 2),
    }
    if 'bare_requests/limit' in results:
        ratios['client_overhead_pct'] = round(
            (default / ms('bare_requests/limit') - 1) * 100, 1)
    return ratios


def latencies(placement, nodes, runs, patched=None):
    """(a) and (c) for a vmdk boot. ``patched``: a second Placement on
    the same data (a patched one), timed in the same runs, taking turns
    with ``placement``, and checked to answer every query the same way
    (allocation requests and provider summaries, order aside; under the
    limit, each answer a valid part of the full one)."""
    placements = {'stock': placement}
    if patched is not None:
        placements['patched'] = patched
    trait = image_types.TRAIT_BY_FORMAT['vmdk']
    vmware = {uuid for uuid, kind in nodes if kind == 'vmware'}
    results = {name: {} for name in placements}
    checks = {}
    # Without the limit first: the full answer a limited one must be part
    # of.
    for variant in VARIANTS:
        full = None
        for limit in (None, NOVA_LIMIT):
            key = '%s/%s' % (variant, 'limit' if limit else 'all')
            qs = query_string('vmdk', variant, limit)
            seen = {name: {'correct': True} for name in placements}
            check = {'answers_compared': 0, 'mismatches': 0}

            def compare(name, size, hosts, body, limit=limit, seen=seen,
                        check=check):
                nonlocal full
                answer = root_required_patch.canonical(body)
                if 'reference' not in check:
                    check['reference'] = answer  # the first answer
                    if limit is None:
                        full = answer
                    check['candidates'] = len(answer['allocation_requests'])
                else:
                    check['answers_compared'] += 1
                    check['mismatches'] += not root_required_patch.\
                        same_answer(check['reference'], answer, limit, full)
                first = seen[name]
                first.setdefault('bytes', size)
                first.setdefault('hosts', len(hosts))
                # Under a limit, a subset; without, exactly the VMware hosts.
                first['correct'] &= (hosts <= vmware if limit
                                     else hosts == vmware)

            samples = _alternating(placements, variant, qs, trait, runs,
                                   compare)
            for name, times in samples.items():
                results[name][key] = {
                    'median_ms': round(statistics.median(times), 2),
                    'min_ms': round(min(times), 2), **seen[name]}
            del check['reference']
            checks[key] = check
    session = requests.Session()
    url = '%s/allocation_candidates?%s' % (placement.endpoint, query_string(
        'vmdk', 'root_required', NOVA_LIMIT))
    headers = {'X-Auth-Token': placement.token, 'Accept': 'application/json',
               'OpenStack-API-Version': 'placement %s'
               % placement.microversion}

    def bare():
        resp = session.get(url, headers=headers, timeout=600)
        resp.raise_for_status()
        return resp.content

    stock = results['stock']
    stock['bare_requests/limit'] = {'median_ms': timed(bare, runs)[0]}
    stock['ratios'] = _ratios(stock)
    # Every answer against the first one of its query: with a patched
    # Placement, stock against patched; alone, stock against itself.
    stock['answers'] = {
        'identical': not any(c['mismatches'] for c in checks.values()),
        'queries': checks}
    if patched is not None:
        results['patched']['ratios'] = _ratios(results['patched'])
        stock['patched'] = results['patched']
    return stock


def miss_probability(hosts, rare, limit):
    """Chance that ``limit`` candidates drawn at random from ``hosts``
    include none of the ``rare`` ones (hypergeometric)."""
    if limit >= hosts:
        return 0.0
    p = 1.0
    for i in range(rare):
        p *= (hosts - limit - i) / (hosts - i)
    return max(p, 0.0)


def false_no_valid_host(placements, nodes, asks):
    """(b): ploop boots under Nova's limit, against each Placement given
    ({name: placement}); counts answers with no host although some exist."""
    trait = image_types.TRAIT_BY_FORMAT['ploop']
    rare = {uuid for uuid, kind in nodes if kind == 'parallels'}
    results = {'rare_hosts': len(rare), 'hosts': len(nodes),
               'limit': NOVA_LIMIT, 'asks': asks,
               'expected_rate_pct_if_random': round(100 * miss_probability(
                   len(nodes), len(rare), NOVA_LIMIT), 3)}
    for name, placement in placements.items():
        client = placement.client()
        for variant in ('root_required', 'scheduler_side'):
            qs = query_string('ploop', variant, NOVA_LIMIT)
            misses = wrong = 0
            for _ in range(asks):
                body = client.get_allocation_candidates(qs)
                hosts = hosts_found(body, variant, trait)
                misses += not hosts
                wrong += bool(hosts - rare)
            results['%s/%s' % (name, variant)] = {
                'false_no_valid_host': misses,
                'rate_pct': round(100.0 * misses / asks, 2),
                'wrong_hosts': wrong}
    return results
