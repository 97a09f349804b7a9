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

from benchmarks.scale import shapes
from image_type_common import image_types
from image_type_filter.client import query
from image_type_filter.client import request_spec as rs
from image_type_filter.client import scheduler_client
from image_type_filter.conf import scheduler_client as client_conf

NOVA_LIMIT = 1000  # [scheduler] max_placement_results' default
VARIANTS = ('root_required', 'required', 'scheduler_side')


def query_string(client, disk_format, variant, limit=None):
    trait = image_types.TRAIT_BY_FORMAT[disk_format]
    if variant == 'scheduler_side':
        spec = rs.RequestSpec.for_boot(disk_format, shapes.RESOURCES)
        qs = query.build(spec, client.microversion)
    else:
        spec = rs.RequestSpec.for_boot(disk_format, shapes.RESOURCES,
                                       root_required={trait})
        qs = query.build(spec, client.microversion, variant)
    return qs + ('&limit=%d' % limit if limit else '')


def hosts_found(body, variant, trait):
    """The hosts a scheduler would go on with: all roots for the
    prefilter, only those whose summary has the trait otherwise."""
    roots = set(scheduler_client.root_providers(body))
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


def latencies(placement, nodes, runs):
    """(a) and (c) for a vmdk boot."""
    client = placement.client()
    trait = image_types.TRAIT_BY_FORMAT['vmdk']
    vmware = {uuid for uuid, kind in nodes if kind == 'vmware'}
    results = {}
    for limit in (NOVA_LIMIT, None):
        for variant in VARIANTS:
            qs = query_string(client, 'vmdk', variant, limit)

            def ask(qs=qs, variant=variant):
                resp = client.request('GET', '/allocation_candidates?' + qs)
                return len(resp.content), hosts_found(
                    json.loads(resp.content), variant, trait)

            ms, (size, hosts) = timed(ask, runs)
            results['%s/%s' % (variant, 'limit' if limit else 'all')] = {
                'median_ms': ms, 'bytes': size, 'hosts': len(hosts),
                # Under a limit, a subset; without, exactly the VMware hosts.
                'correct': hosts <= vmware if limit else hosts == vmware}
    session = requests.Session()
    url = '%s/allocation_candidates?%s' % (placement.endpoint, query_string(
        client, 'vmdk', client_conf.ROOT_REQUIRED, NOVA_LIMIT))
    headers = {'X-Auth-Token': placement.token, 'Accept': 'application/json',
               'OpenStack-API-Version': 'placement %s'
               % placement.microversion}

    def bare():
        resp = session.get(url, headers=headers, timeout=600)
        resp.raise_for_status()
        return resp.content

    results['bare_requests/limit'] = {'median_ms': timed(bare, runs)[0]}
    default = results['root_required/limit']['median_ms']
    results['ratios'] = {
        'scheduler_side_over_default_limit': round(
            results['scheduler_side/limit']['median_ms'] / default, 2),
        'scheduler_side_over_default_all': round(
            results['scheduler_side/all']['median_ms']
            / results['root_required/all']['median_ms'], 2),
        'scheduler_side_over_required_limit': round(
            results['scheduler_side/limit']['median_ms']
            / results['required/limit']['median_ms'], 2),
        'root_required_over_required_limit': round(
            default / results['required/limit']['median_ms'], 2),
        'client_overhead_pct': round(
            (default / results['bare_requests/limit']['median_ms'] - 1) * 100,
            1),
    }
    return results


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
        for variant in (client_conf.ROOT_REQUIRED, 'scheduler_side'):
            qs = query_string(client, 'ploop', variant, NOVA_LIMIT)
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
