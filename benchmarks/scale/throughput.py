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

"""(d) Scheduler throughput: boots per second with K concurrent schedulers.

A boot is what Nova's scheduler does with Placement: ask for candidates
under Nova's limit, pick a host (at random among those that fit, as
``host_subset_size`` spreads them), and claim it with ``PUT
/allocations/{consumer}``; a claim that loses a race (409) is retried on
another host. With the filter the trait is in the query; without it, all
candidates come back and the scheduler keeps those whose summary has the
trait.
"""

import random
import threading
import time
import uuid as uuid_mod

from benchmarks.scale import queries
from benchmarks.scale import shapes
from image_type_common import exceptions
from image_type_common import image_types
from placement_runner import writes

CLAIM_TRIES = 3
PROJECT = uuid_mod.uuid4().hex
USER = uuid_mod.uuid4().hex


def _boot(client, qs, variant, trait, rng):
    body = client.get_allocation_candidates(qs)
    hosts = sorted(queries.hosts_found(body, variant, trait))
    for host in rng.sample(hosts, min(CLAIM_TRIES, len(hosts))):
        try:
            writes.put_allocations(client, uuid_mod.uuid4(), {
                'allocations': {host: {'resources': shapes.RESOURCES}},
                'project_id': PROJECT, 'user_id': USER,
                'consumer_generation': None,
                'consumer_type': 'INSTANCE'})  # required from 1.38
            return 'booted'
        except exceptions.ConcurrentUpdate:
            continue
        except exceptions.PlacementError as exc:
            if '409' not in str(exc):
                raise
    return 'no_host' if not hosts else 'claims_lost'


def boots_per_second(placement, schedulers, boots, variant, seed=1):
    """``boots`` vmdk boots shared by ``schedulers`` threads."""
    trait = image_types.TRAIT_BY_FORMAT['vmdk']
    clients = [placement.client() for _ in range(schedulers)]
    qs = queries.query_string('vmdk', variant, queries.NOVA_LIMIT)
    for client in clients:
        client.negotiate()  # discovery before the clock starts
    left = [boots]
    lock = threading.Lock()
    outcomes = {'booted': 0, 'no_host': 0, 'claims_lost': 0, 'errors': 0}
    first_error = []

    def scheduler(client, rng):
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            try:
                outcome = _boot(client, qs, variant, trait, rng)
            except exceptions.Error as exc:
                outcome = 'errors'
                first_error[:] = first_error or [str(exc)[:300]]
            with lock:
                outcomes[outcome] += 1

    threads = [threading.Thread(target=scheduler,
                                args=(client, random.Random(seed + i)))
               for i, client in enumerate(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - start
    return {'schedulers': schedulers, 'boots': boots,
            'boots_per_second': round(outcomes['booted'] / seconds, 2),
            'seconds': round(seconds, 2), **outcomes,
            'first_error': first_error[0] if first_error else None}


def throughput(placement, boots, concurrency):
    results = []
    for schedulers in concurrency:
        for variant, label in ((queries.VARIANTS[0], 'with_filter'),
                               ('scheduler_side', 'without_filter')):
            row = boots_per_second(placement, schedulers, boots, variant)
            row['variant'] = label
            results.append(row)
    return results
