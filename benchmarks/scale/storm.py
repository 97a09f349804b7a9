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

"""The start-up storm: every node's reporter starts at the same moment.

Each node gets a client of its own (its own keystoneauth session, so its
own connection and its own version discovery, as a freshly started
reporter has), in a thread; the threads are spread over a few processes so
the clients are not serialised behind one interpreter lock. All wait on
one event, then each syncs its provider once, exactly as the reporter does
at start-up with its provider known (``compute_id``): discovery, a read of
the provider's traits, and a write only if they differ.

Afterwards Placement itself is asked whether every node ended with exactly
its traits, and whether anybody else's traits survived.
"""

import logging
import multiprocessing
import threading
import time

from benchmarks import counting
from benchmarks.scale import clients
from benchmarks.scale import shapes
from image_type_common import image_types

SPAWN = multiprocessing.get_context('spawn')


class _RetryCounter(logging.Handler):
    """Counts keystoneauth's "Failure: ... Retrying" warnings: connections
    reset or timed out and retried (``connect_retries``) before a request
    reached Placement. Counted instead of printed."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record):
        if str(record.msg).startswith('Failure'):
            self.count += 1


def _nodes_process(endpoint, token, nodes, go, ready, results):
    """One process's share of the nodes, a thread and a client each."""
    from virt_capabilities import ownership
    from virt_capabilities import reporter as reporter_mod

    retries = _RetryCounter()
    session_log = logging.getLogger('keystoneauth.session')
    session_log.addHandler(retries)
    session_log.propagate = False
    threading.stack_size(512 * 1024)
    outcomes = []
    lock = threading.Lock()

    def node(uuid, kind, client):
        sent = counting.counted(client)
        go.wait()
        conflicts, error = 0, None
        try:
            result = reporter_mod.Reporter(client, ownership.OwnerRule(
                image_types=shapes.KIND_TRAITS[kind],
                owns_image_types=True)).sync_provider(uuid)
            conflicts = result.conflicts
        except Exception as exc:  # counted and shown, never hidden
            error = '%s: %s' % (type(exc).__name__, exc)
        with lock:
            outcomes.append((sent.count, conflicts, error,
                             time.monotonic()))

    threads = [threading.Thread(
        target=node, args=(uuid, kind, clients.new_client(endpoint, token)))
        for uuid, kind in nodes]
    for thread in threads:
        thread.start()
    ready.put(len(threads))
    for thread in threads:
        thread.join()
    errors = [o[2] for o in outcomes if o[2]]
    results.put({
        'nodes': len(outcomes),
        'requests': sum(o[0] for o in outcomes),
        'max_requests': max((o[0] for o in outcomes), default=0),
        'conflicts': sum(o[1] for o in outcomes),
        'errors': len(errors),
        'first_errors': errors[:3],
        'last_done': max((o[3] for o in outcomes), default=0.0),
        'connection_retries': retries.count,
    })


def storm(placement, nodes, processes=4):
    """Start every node's reporter at once; returns the measurements."""
    go, ready, results = SPAWN.Event(), SPAWN.Queue(), SPAWN.Queue()
    shares = [nodes[i::processes] for i in range(processes)]
    workers = [SPAWN.Process(target=_nodes_process, args=(
        placement.endpoint, placement.token, share, go, ready, results))
        for share in shares if share]
    for worker in workers:
        worker.start()
    try:
        for _ in workers:
            ready.get(timeout=600)
        seen_before = len(placement.requests_seen())
        start = time.monotonic()
        go.set()
        parts = [results.get(timeout=3600) for _ in workers]
    finally:
        for worker in workers:
            worker.join(timeout=60)
            if worker.is_alive():
                worker.kill()
                worker.join()
    seconds = max(p['last_done'] for p in parts) - start
    server_requests = len(placement.requests_seen()) - seen_before
    state = verify(placement.client(), nodes)
    count = len(nodes)
    requests = sum(p['requests'] for p in parts)
    return {
        'nodes': count,
        'seconds_until_all_in_sync': round(seconds, 2),
        'requests_per_node': round(requests / count, 3),
        'max_requests_one_node': max(p['max_requests'] for p in parts),
        'server_requests_per_node': round(server_requests / count, 3),
        'conflicts_409': sum(p['conflicts'] for p in parts),
        'connection_retries': sum(p['connection_retries'] for p in parts),
        'errors': sum(p['errors'] for p in parts),
        'first_errors': [e for p in parts for e in p['first_errors']][:3],
        'client_processes': len(workers),
        **state,
    }


def verify(client, nodes):
    """Placement's own view: every node has exactly its image traits, and
    the traits of others (nova-compute's ``COMPUTE_NODE``, a CPU flag) are
    all still there. One query per trait."""
    expected = shapes.expected_holders(nodes)
    everyone = {uuid for uuid, _ in nodes}
    lost = wrong = 0
    for trait in sorted(set(image_types.TRAIT_BY_FORMAT.values())):
        holders = {rp['uuid'] for rp in
                   client.list_resource_providers(required=trait)} & everyone
        want = expected.get(trait, set())
        lost += len(want - holders)
        wrong += len(holders - want)
    others_lost = 0
    for trait in sorted(shapes.OTHERS_TRAITS):
        holders = {rp['uuid'] for rp in
                   client.list_resource_providers(required=trait)}
        others_lost += len(everyone - holders)
    return {'image_traits_lost': lost, 'image_traits_wrong': wrong,
            'others_traits_lost': others_lost,
            'in_sync': lost == wrong == others_lost == 0}
