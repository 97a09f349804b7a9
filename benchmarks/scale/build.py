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

"""Build the fleet concurrently, the way nova-compute creates its nodes.

Each host gets a provider, its inventory and nova-compute's own traits
(three requests; a nested host two more, for its child provider and the
child's inventory). The image-type traits are left to the reporters'
storm, unless ``image_traits`` (a run without the storm) puts them on the
root with nova-compute's.
The work is spread over a few processes of several threads each, so the
client side is not the bottleneck.
"""

import concurrent.futures
import multiprocessing
import threading
import time

from benchmarks.scale import clients
from benchmarks.scale import shapes
from placement_runner import writes

SPAWN = multiprocessing.get_context('spawn')
#: Client processes the build is spread over (each a spawned Python
#: that imports the client first: a tiny fleet wants fewer).
PROCESSES = 4


def _create_share(endpoint, token, share, threads, shape='flat'):
    """Create this process's share: [(index, name, traits)] ->
    [(index, root uuid)]."""
    from image_type_demo import fleet

    local = threading.local()
    root_inventory, child_inventory = shapes.inventories(shape)

    def create(item):
        index, name, traits = item
        client = getattr(local, 'client', None)
        if client is None:
            client = local.client = clients.new_client(endpoint, token)
        root = fleet.create_provider(client, name, root_inventory,
                                     traits=traits)
        if child_inventory:
            child = writes.create_resource_provider(client, name + '-numa0',
                                                    parent=root)
            writes.put_inventories(client, child['uuid'], child['generation'],
                                   child_inventory)
        return index, root

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        return list(pool.map(create, share))


def build(placement, size, processes=PROCESSES, threads=8, shape='flat',
          image_traits=False):
    """Create ``size`` hosts; returns ([(root uuid, kind)], seconds)."""
    kinds = shapes.kinds(size)
    items = [(i, 'bench-%05d' % i, shapes.OTHERS_TRAITS
              | (shapes.KIND_TRAITS[kinds[i]] if image_traits else set()))
             for i in range(size)]
    common = [it for it in items if kinds[it[0]] != 'parallels']
    rare = [it for it in items if kinds[it[0]] == 'parallels']
    start = time.perf_counter()
    # The rare kind is added last.
    uuids = create(placement, (common, rare), processes, threads, shape)
    seconds = time.perf_counter() - start
    return [(uuids[i], kinds[i]) for i in range(size)], seconds


def create(placement, batches, processes=PROCESSES, threads=8, shape='flat'):
    """Create each batch of [(index, name, traits)] hosts in turn (a later
    batch as hosts added to an existing cloud); returns {index: root uuid}.
    """
    uuids = {}
    with concurrent.futures.ProcessPoolExecutor(
            processes, mp_context=SPAWN) as pool:
        for batch in batches:
            shares = [batch[i::processes] for i in range(processes)]
            for done in pool.map(_create_share,
                                 [placement.endpoint] * processes,
                                 [placement.token] * processes, shares,
                                 [threads] * processes,
                                 [shape] * processes):
                uuids.update(done)
    return uuids
