"""Build the fleet concurrently, the way nova-compute creates its nodes.

Each host gets a provider, its inventory and nova-compute's own traits
(three requests); the image-type traits are left to the reporters' storm.
The work is spread over a few processes of several threads each, so the
client side is not the bottleneck.
"""

import concurrent.futures
import multiprocessing
import threading
import time

from benchmarks.scale import clients
from benchmarks.scale import shapes

SPAWN = multiprocessing.get_context('spawn')


def _create_share(endpoint, token, share, threads):
    """Create this process's share: [(index, name)] -> [(index, uuid)]."""
    from image_type_demo import fleet

    local = threading.local()

    def create(item):
        index, name = item
        client = getattr(local, 'client', None)
        if client is None:
            client = local.client = clients.new_client(endpoint, token)
        return index, fleet.create_provider(
            client, name, shapes.INVENTORY, traits=shapes.OTHERS_TRAITS)

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        return list(pool.map(create, share))


def build(placement, size, processes=4, threads=8):
    """Create ``size`` hosts; returns ([(uuid, kind)], seconds)."""
    kinds = shapes.kinds(size)
    items = [(i, 'bench-%05d' % i) for i in range(size)]
    common = [it for it in items if kinds[it[0]] != 'parallels']
    rare = [it for it in items if kinds[it[0]] == 'parallels']
    uuids = {}
    start = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(
            processes, mp_context=SPAWN) as pool:
        for batch in (common, rare):  # the rare kind is added last
            shares = [batch[i::processes] for i in range(processes)]
            for done in pool.map(_create_share,
                                 [placement.endpoint] * processes,
                                 [placement.token] * processes, shares,
                                 [threads] * processes):
                uuids.update(done)
    seconds = time.perf_counter() - start
    return [(uuids[i], kinds[i]) for i in range(size)], seconds
