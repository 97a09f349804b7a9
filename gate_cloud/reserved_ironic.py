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

"""The reserved ironic node stays reserved, in the real cloud.

Nova's ironic driver replaces an ironic node's provider traits with the
Ironic node's own on every push; the reporter of the ironic nova-compute
(``services/ironic_compute.py``, its own Keystone user with ``service``
alone) keeps ``CUSTOM_TROVE`` on the reserved Ironic node instead, which
nova-compute copies to the provider. This phase shows, in order:

1. the reporter put the trait on the reserved Ironic node, on no other
   node, and never wrote the provider's traits in Placement itself (its
   user's requests in Placement's access log);
2. nova-compute copied it to the provider (its ``PUT`` of the provider's
   traits is in the access log: the push that would erase a trait written
   to the provider);
3. the provider keeps it across ``REFRESHES`` of nova-compute's cache of
   the provider (its ``GET`` of the traits after the copy), each followed,
   in the same resource update, by the push that would remove a trait the
   Ironic node lacks (done once nova-compute reads the traits again), read
   from Placement every ``POLL`` seconds, never missing once: the refreshes
   are waited for, not slept through;
4. with the baremetal flavor, an untagged boot takes the free node, the
   next untagged boot (the reserved node now the only free one) ends in
   "No valid host", and a ``trait:CUSTOM_TROVE=required`` boot takes the
   reserved node; ``candidates --server`` explains each as
   nova-scheduler asked.
"""

import time

from gate_cloud import access_log
from gate_cloud import boots
from gate_cloud import candidates
from gate_cloud import layout
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import ironic
from gate_cloud.services import ironic_compute
from gate_cloud.services import nova_scheduler
from gate_cloud.services import placement

#: A whole ironic node, as Nova documents a baremetal flavor.
FLAVOR = {'id': 'gate-baremetal', 'name': 'gate.baremetal', 'ram': 1024,
          'vcpus': 1, 'disk': 10}
EXTRA_SPECS = {'resources:CUSTOM_BAREMETAL': '1', 'resources:VCPU': '0',
               'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0'}
#: How many of nova-compute's provider refreshes (and the push after
#: each) the trait must outlive: the first after the copy already removes
#: a trait the Ironic node lacks.
REFRESHES = 1
#: Seconds between reads of the provider's traits while they happen.
POLL = 1.0
#: Seconds for the trait to reach the node, then the provider, then for
#: the refreshes (each at most a refresh interval and a resource update).
DEADLINE = 180.0 + (REFRESHES + 1) * 3 * (
    ironic_compute.ASSOCIATION_REFRESH + ironic_compute.UPDATE_INTERVAL)
NODE_RELEASE_DEADLINE = 240.0


def _poll(what, probe, deadline=DEADLINE):
    end = time.monotonic() + deadline
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > end:
            raise GateError('%s: not within %d s' % (what, deadline))
        time.sleep(POLL)


def provider_traits(admin, node_uuid):
    return set(rest.provider_traits(admin, node_uuid))


def trait_writes(requests, node_uuid, user):
    """``user``'s requests that change the provider's traits."""
    path = '/resource_providers/%s/traits' % node_uuid
    return [r for r in requests if r.path == path and r.user == user
            and r.method in ('PUT', 'POST', 'DELETE')]


def refreshes(requests, node_uuid, user='nova'):
    """nova-compute's reads of the provider's traits: each a refresh of
    its cache (it reads them only then)."""
    path = '/resource_providers/%s/traits' % node_uuid
    return [r for r in requests if r.path == path and r.user == user
            and r.method == 'GET']


def hold_through_refreshes(admin, node_uuid, start, count=REFRESHES,
                           deadline=DEADLINE):
    """Read the provider's traits every POLL s until nova-compute has
    refreshed its cache ``count`` times after access-log line ``start``
    and read the traits once more (so the push after the last refresh is
    done); the reserved trait on every read. Returns how many reads it
    took."""
    reads = 0
    end = time.monotonic() + deadline
    while True:
        reads += 1
        if layout.RESERVED_TRAIT not in provider_traits(admin, node_uuid):
            raise GateError('%s left provider %s after %d read(s): '
                            'nova-compute\'s push removed it'
                            % (layout.RESERVED_TRAIT, node_uuid, reads))
        seen = refreshes(access_log.since('placement', start), node_uuid)
        if len(seen) > count:
            # The push that followed refresh number ``count`` is done.
            return reads
        if time.monotonic() > end:
            raise GateError('nova-compute refreshed provider %s %d time(s) '
                            'in %d s, %d wanted' % (node_uuid, len(seen),
                                                    deadline, count))
        time.sleep(POLL)


def _wait_available(node_admin):
    for name, node_uuid in ironic.NODES.items():
        _poll('ironic node %s available again' % name,
              lambda u=node_uuid: (ironic.node(node_admin, u) or {}).get(
                  'provision_state') == 'available',
              NODE_RELEASE_DEADLINE)


def _boot(cloud, ctx, name, image_id, expect, label, servers):
    """Boot one server (its id added to ``servers`` at once, for the
    clean-up) and explain it."""
    admin = ctx.admin
    mark = access_log.mark('placement')
    sid, request_id = boots.create_server(admin, name, image_id,
                                          FLAVOR['id'])
    servers.append(sid)
    server = boots.wait(admin, sid, deadline=boots.BOOT_DEADLINE * 2)
    return candidates.prove(cloud, ctx, server, request_id, mark, expect,
                            nova_scheduler.conf_path(), label)


def run(cloud, ctx):
    """Returns the phase's record; raises GateError at the first broken
    step."""
    admin, node_admin = ctx.admin, ironic.client(ctx)
    reserved = ironic.NODES[ironic.RESERVED_NODE]
    free = [u for n, u in ironic.NODES.items() if n != ironic.RESERVED_NODE]
    started = time.monotonic()
    # 1. The reporter wrote the Ironic node.
    _poll('the reporter putting %s on Ironic node %s' % (
        layout.RESERVED_TRAIT, ironic.RESERVED_NODE),
        lambda: layout.RESERVED_TRAIT in ironic.node_traits(node_admin,
                                                            reserved))
    for node_uuid in free:
        if layout.RESERVED_TRAIT in ironic.node_traits(node_admin, node_uuid):
            raise GateError('%s is on free Ironic node %s too'
                            % (layout.RESERVED_TRAIT, node_uuid))
    # 2. nova-compute copied it to the provider.
    _poll('nova-compute copying %s to provider %s' % (
        layout.RESERVED_TRAIT, reserved),
        lambda: layout.RESERVED_TRAIT in provider_traits(admin, reserved))
    copied = time.monotonic() - started
    start = access_log.mark('placement')
    everything = access_log.since('placement')
    written = trait_writes(everything, reserved,
                           ironic_compute.REPORTER_USER)
    if written:
        raise GateError('the ironic reporter wrote provider %s\'s traits in '
                        'Placement (%s %s)' % (reserved, written[0].method,
                                               written[0].target))
    pushes = trait_writes(everything, reserved, 'nova')
    if not pushes:
        raise GateError('no PUT of provider %s\'s traits by nova-compute in '
                        '%s: the trait came some other way'
                        % (reserved, access_log.path('placement')))
    # 3. It outlives nova-compute's refreshes and pushes.
    reads = hold_through_refreshes(admin, reserved, start)
    held = time.monotonic() - started - copied
    print('[ironic] %s on node %s, copied to its provider in %.0f s, kept '
          'through %d refreshes (%d reads over %.0f s)' % (
              layout.RESERVED_TRAIT, ironic.RESERVED_NODE, copied,
              REFRESHES, reads, held), flush=True)
    # 4. Boots.
    raw = cloud['image_files']['raw']
    images, servers, proofs = [], [], []
    boots.create_flavor(admin, FLAVOR['id'], FLAVOR['name'], FLAVOR['ram'],
                        FLAVOR['vcpus'], FLAVOR['disk'], EXTRA_SPECS)
    try:
        untagged = boots.upload_image(admin, 'gate-bm-raw', 'raw', raw)
        images.append(untagged)
        tagged = boots.upload_image(
            admin, 'gate-bm-trove', 'raw', raw,
            {'trait:%s' % layout.RESERVED_TRAIT: 'required'})
        images.append(tagged)
        plan = [
            ('bm-untagged', untagged, candidates.Expect(
                'ACTIVE', hosts=frozenset(free))),
            ('bm-untagged-2', untagged, candidates.Expect(
                'ERROR', causes={reserved: (layout.RESERVED_TRAIT,)},
                other_causes=('CUSTOM_BAREMETAL',))),
            ('bm-tagged', tagged, candidates.Expect(
                'ACTIVE', hosts=frozenset([reserved]))),
        ]
        for label, image_id, expect in plan:
            proofs.append(_boot(cloud, ctx, 'gate-' + label, image_id,
                                expect, label, servers))
    finally:
        for sid in servers:
            boots.delete(admin, sid, deadline=NODE_RELEASE_DEADLINE)
        for image_id in images:
            boots.delete_image(admin, image_id)
        boots.delete_flavor(admin, FLAVOR['id'])
        if servers:
            _wait_available(node_admin)
    return {'trait_copied_s': round(copied, 1), 'refreshes': REFRESHES,
            'reads': reads, 'held_s': round(held, 1), 'boots': proofs,
            'placement': placement.URL}
