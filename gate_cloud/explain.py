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

"""``candidates --server`` proven on the boots an operator asks about.

Each boot is made alone, with the filters on, then the tool is run on the
server and held to Placement's access log and to where the server went
(``candidates.py``); expectations come from cloud.json and Placement's
traits, worked out before the boot:

``qcow2``
    a qcow2 image: ACTIVE on a host that boots qcow2.
``disabled``
    the case operators meet most: the libvirt host's nova-compute disabled
    (``gate-maint``), its provider carrying ``COMPUTE_STATUS_DISABLED``, a
    qcow2 boot ends in "No valid host"; the tool names the disabled
    service and its reason for that host (then it is enabled again).
``dedicated``
    a flavor with extra specs: ``hw:cpu_policy=dedicated`` (no host has
    PCPU inventory, so nova-scheduler sends its second, VCPU, query: two
    queries) and ``trait:HW_CPU_X86_AVX2=required``; where it lands (or
    that it finds no host) depends on the host's CPU, and is checked either
    way.
``trove``
    a ``trait:CUSTOM_TROVE=required`` image: ACTIVE on the reserved host.
``scsi``
    an ``hw_disk_bus=scsi`` image (the storage_bus family is on): ACTIVE
    on a host with ``COMPUTE_STORAGE_BUS_SCSI``.
``vmdk``
    a format no host boots: refused before Placement is asked (no query);
    the tool names vmdk.
``az``, ``az-qcow2``
    into availability zone ``gate-az`` (an aggregate of one raw-only
    host): raw lands there; qcow2 finds no host, every other host named
    for the zone's aggregate (``member_of``), the one in it for the
    format.
``too-big``
    a flavor bigger than every host: every host named for its disk.
"""

import time

from gate_cloud import access_log
from gate_cloud import boots
from gate_cloud import candidates
from gate_cloud import layout
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import nova
from gate_cloud.services import nova_compute
from gate_cloud.services import nova_scheduler

DISABLED_REASON = 'gate-maint'
AZ = 'gate-az'
DISABLED = 'COMPUTE_STATUS_DISABLED'
#: Flavors the phase makes (and removes).
DEDICATED = {'id': 'gate-dedicated', 'name': 'gate.dedicated', 'ram': 128,
             'vcpus': 1, 'disk': 1,
             'extra_specs': {'hw:cpu_policy': 'dedicated',
                             'trait:HW_CPU_X86_AVX2': 'required'}}
#: Bigger than every host by its disk (a project's quota counts vcpus
#: and memory, not disk: Nova would refuse those before scheduling).
TOO_BIG = {'id': 'gate-too-big', 'name': 'gate.too-big', 'ram': 128,
           'vcpus': 1, 'disk': 1024 * 1024}
#: Seconds for nova-compute to set or clear COMPUTE_STATUS_DISABLED.
STATUS_DEADLINE = 180.0


def compute_service(admin, host):
    found = [s for s in nova.services(admin, 'nova-compute')
             if s['host'] == host]
    if not found:
        raise GateError('no nova-compute service on host %s' % host)
    return found[0]


def set_service(admin, host, enabled):
    body = {'status': 'enabled'} if enabled else {
        'status': 'disabled', 'disabled_reason': DISABLED_REASON}
    admin.put(nova.API_URL + '/os-services/%s' % compute_service(
        admin, host)['id'], body, headers=rest.COMPUTE_HEADERS)


def wait_trait(admin, provider_uuid, trait, present):
    end = time.monotonic() + STATUS_DEADLINE
    while (trait in rest.provider_traits(admin, provider_uuid)) != present:
        if time.monotonic() > end:
            raise GateError('provider %s %s %s after %d s' % (
                provider_uuid, 'never got' if present else 'still has',
                trait, STATUS_DEADLINE))
        time.sleep(1)


def make_aggregate(admin, host):
    agg = admin.post(nova.API_URL + '/os-aggregates', {'aggregate': {
        'name': AZ, 'availability_zone': AZ}},
        headers=rest.COMPUTE_HEADERS)['aggregate']
    admin.post(nova.API_URL + '/os-aggregates/%s/action' % agg['id'],
               {'add_host': {'host': host}}, headers=rest.COMPUTE_HEADERS)
    return agg['id']


def remove_aggregate(admin, agg_id, host):
    url = nova.API_URL + '/os-aggregates/%s' % agg_id
    try:
        admin.post(url + '/action', {'remove_host': {'host': host}},
                   headers=rest.COMPUTE_HEADERS)
    except rest.HTTPError as exc:
        if exc.code not in (404, 409):
            raise
    admin.delete(url, headers=rest.COMPUTE_HEADERS)


def hosts_booting(computes, disk_format, traits=None, required=()):
    """The hosts (provider names) an untagged image of ``disk_format``
    may go to with the filters on: they report the format, carry no
    reserved trait and, with ``traits`` ({provider: traits}), carry
    every ``required`` trait."""
    return frozenset(
        c['provider'] for c in computes
        if disk_format in c['image_types'] and not c['custom_traits']
        and all(t in (traits or {}).get(c['provider'], ()) for t in
                required))


def plan(cloud, traits):
    """(label, image key, flavor id, availability zone, Expect) of each
    boot, in order; ``traits`` is {provider: traits} from Placement."""
    computes = cloud['computes']
    libvirt = [c for c in computes
               if c['driver'] == nova_compute.LIBVIRT][0]['provider']
    reserved = [c['provider'] for c in computes
                if layout.RESERVED_TRAIT in c['custom_traits']]
    zone_host = [c for c in computes if c['image_types'] == ['raw']
                 and not c['custom_traits']][0]['provider']
    flavor = cloud['flavor']['id']
    nvh = 'ERROR'
    scsi = hosts_booting(computes, 'qcow2', traits,
                         ['COMPUTE_STORAGE_BUS_SCSI'])
    avx2 = hosts_booting(computes, 'raw', traits, ['HW_CPU_X86_AVX2'])
    return [
        ('qcow2', 'qcow2', flavor, None, candidates.Expect(
            'ACTIVE', queries=1, hosts=hosts_booting(computes, 'qcow2'))),
        ('disabled', 'qcow2', flavor, None, candidates.Expect(
            nvh, queries=1,
            causes={libvirt: ('!' + DISABLED, DISABLED_REASON)},
            other_causes=('COMPUTE_IMAGE_TYPE_QCOW2', 'resources '))),
        ('dedicated', 'raw', DEDICATED['id'], None, candidates.Expect(
            # Where no host reports the CPU trait, no host; else where it
            # lands depends on pinning on that host.
            None if avx2 else nvh, queries=2, other_causes=(
                'PCPU', 'HW_CPU_X86_AVX2', 'resources ',
                'COMPUTE_IMAGE_TYPE_', layout.RESERVED_TRAIT))),
        ('trove', 'trove', flavor, None, candidates.Expect(
            'ACTIVE', queries=1, hosts=frozenset(reserved))),
        ('scsi', 'scsi', flavor, None, candidates.Expect(
            'ACTIVE', queries=1, hosts=scsi) if scsi else candidates.Expect(
                nvh, queries=1, other_causes=('COMPUTE_STORAGE_BUS_SCSI',
                                              'COMPUTE_IMAGE_TYPE_QCOW2',
                                              'resources '))),
        ('vmdk', 'vmdk', flavor, None, candidates.Expect(
            nvh, queries=0, no_valid_host=('vmdk',))),
        ('az', 'raw', flavor, AZ, candidates.Expect(
            'ACTIVE', queries=1, hosts=frozenset([zone_host]))),
        ('az-qcow2', 'qcow2', flavor, AZ, candidates.Expect(
            nvh, queries=1, causes={zone_host: ('COMPUTE_IMAGE_TYPE_QCOW2',)},
            other_causes=('member_of',))),
        ('too-big', 'raw', TOO_BIG['id'], None, candidates.Expect(
            nvh, queries=1, other_causes=('DISK_GB',))),
    ]


def images(admin, cloud):
    """{key: image id} of the images the boots use."""
    files = cloud['image_files']
    specs = {
        'qcow2': ('qcow2', {}),
        'raw': ('raw', {}),
        'vmdk': ('vmdk', {}),
        'trove': ('raw', {'trait:%s' % layout.RESERVED_TRAIT: 'required'}),
        'scsi': ('qcow2', {'hw_disk_bus': 'scsi'}),
    }
    out = {}
    for key, (fmt, props) in specs.items():
        out[key] = boots.upload_image(admin, 'gate-explain-' + key, fmt,
                                      files[fmt], props)
    return out


def boot_and_prove(cloud, ctx, label, image_id, flavor_id, zone, expect,
                   servers):
    admin = ctx.admin
    mark = access_log.mark('placement')
    sid, request_id = boots.create_server(admin, 'gate-explain-' + label,
                                          image_id, flavor_id, zone)
    servers.append(sid)
    server = boots.wait(admin, sid)
    return candidates.prove(cloud, ctx, server, request_id, mark, expect,
                            nova_scheduler.conf_path(), label)


def run(cloud, ctx):
    """Returns one record per boot; raises GateError at the first
    problem (the cloud is put back as it was either way)."""
    admin = ctx.admin
    computes = cloud['computes']
    libvirt = [c for c in computes if c['driver'] == nova_compute.LIBVIRT][0]
    zone_host = [c for c in computes if c['image_types'] == ['raw']
                 and not c['custom_traits']][0]
    providers = {p['name']: p['uuid'] for p in rest.providers(admin)}
    traits = rest.all_traits(admin)
    steps = plan(cloud, traits)
    made = {'images': {}, 'servers': [], 'flavors': [], 'aggregate': None}
    proofs = []
    try:
        made['images'] = images(admin, cloud)
        for spec in (DEDICATED, TOO_BIG):
            made['flavors'].append(boots.create_flavor(
                admin, spec['id'], spec['name'], spec['ram'], spec['vcpus'],
                spec['disk'], spec.get('extra_specs')))
        made['aggregate'] = make_aggregate(admin, zone_host['host'])
        for label, image, flavor_id, zone, expect in steps:
            disabling = label == 'disabled'
            if disabling:
                set_service(admin, libvirt['host'], False)
                wait_trait(admin, providers[libvirt['provider']], DISABLED,
                           True)
            try:
                proofs.append(boot_and_prove(
                    cloud, ctx, label, made['images'][image], flavor_id,
                    zone, expect, made['servers']))
            finally:
                if disabling:
                    set_service(admin, libvirt['host'], True)
                    wait_trait(admin, providers[libvirt['provider']],
                               DISABLED, False)
            boots.delete(admin, made['servers'].pop())
    finally:
        for sid in made['servers']:
            boots.delete(admin, sid)
        if made['aggregate'] is not None:
            remove_aggregate(admin, made['aggregate'], zone_host['host'])
        for flavor_id in made['flavors']:
            boots.delete_flavor(admin, flavor_id)
        for image_id in made['images'].values():
            boots.delete_image(admin, image_id)
    return proofs
