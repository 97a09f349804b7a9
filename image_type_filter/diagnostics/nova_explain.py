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

"""For a real server, image or flavor: nova-scheduler's query, asked again.

Reads the server (its embedded flavor, its image as Glance has it now, its
project, pinned availability zone and server groups), or an image and a
flavor, through the operator's own credentials (``cloud``); runs Nova's
request filters (``nova_request_filters``) and, when nova.conf loads them,
this project's; builds the query as nova-scheduler does (``nova_query``);
sends it to Placement; and judges every compute host (``verdicts``), the
server's own host with its allocation given back.

What the answer does not explain is said in it: nova-scheduler's host
filters run after Placement ("Filtering removed all hosts", an empty
reason too) and are not run here; the parts of Nova's query this tool does
not rebuild are listed (``nova_query.NOT_COVERED`` and the filters not
covered).
"""

import dataclasses
from urllib import parse

from image_type_common import exceptions
from image_type_filter import exceptions as filter_exceptions
from image_type_filter.client import nova_query
from image_type_filter.client import nova_request_filters as nova_filters
from image_type_filter.client import scheduler_client
from image_type_filter.diagnostics import cloud as cloud_mod
from image_type_filter.diagnostics import nova_scheduler
from image_type_filter.diagnostics import survey as survey_mod
from image_type_filter.diagnostics import verdicts as verdicts_mod
from image_type_filter.scheduler import pipeline as pipeline_mod

IMAGE_NOW = ('the image as Glance has it now: nova-scheduler read it when '
             'the server was booted, and a property changed since then '
             'makes the queries differ')
EXPLAINS = (
    'Explains what Placement leaves out (the query\'s traits, resources '
    'and aggregates), host by host. Not run here: nova-scheduler\'s host '
    'filters, which run on the hosts Placement offers (a "No valid host" '
    'with candidates listed here is theirs: "Filtering removed all hosts" '
    'in nova-scheduler\'s log), and the claim that follows.')


@dataclasses.dataclass
class Subject:
    """What is asked for: a server's boot, or an image and a flavor."""

    kind: str
    flavor: nova_query.Flavor
    image: nova_query.Image = None
    is_bfv: bool = False
    project_id: str = None
    availability_zone: str = None
    in_server_group: bool = False
    server: dict = None
    #: The compute node provider name the server runs on.
    current_host: str = None
    notes: list = dataclasses.field(default_factory=list)

    def describe(self):
        described = {'kind': self.kind, 'flavor': self.flavor.name,
                     'image': (self.image.id if self.image else None),
                     'disk_format': (self.image.disk_format if self.image
                                     else None),
                     'volume_backed': self.is_bfv,
                     'project': self.project_id,
                     'availability_zone': self.availability_zone,
                     'in_server_group': self.in_server_group,
                     'notes': list(self.notes)}
        if self.server is not None:
            fault = self.server.get('fault') or {}
            described.update(server=self.server.get('id'),
                             status=self.server.get('status'),
                             host=self.current_host,
                             fault=fault.get('message'))
        return described


def image_from_glance(image_api, name_or_id):
    found = image_api.image(name_or_id)
    base, properties = cloud_mod.split_image(found,
                                             image_api.base_attributes())
    return nova_query.Image(base.get('id'), base.get('name'),
                            base.get('disk_format'), properties)


def for_server(compute, image_api, name_or_id):
    """A Subject for an existing server (any status)."""
    server = compute.server(name_or_id)
    embedded = server.get('flavor') or {}
    if 'vcpus' not in embedded:
        raise cloud_mod.CloudError(
            'Nova did not embed server %s\'s flavor: the compute API is '
            'older than 2.47' % server.get('id'))
    image_ref = server.get('image')
    notes = []
    image = None
    is_bfv = not image_ref
    if is_bfv:
        notes.append('volume-backed: the volume\'s image metadata, which '
                     'nova-scheduler reads as the image, is not read here '
                     '(its traits and properties are missing)')
    else:
        try:
            image = image_from_glance(image_api, image_ref['id'])
        except cloud_mod.NotFound as exc:
            raise cloud_mod.NotFound(
                'server %s boots image %s, which Glance no longer has: the '
                'query cannot be built' % (server.get('id'),
                                           image_ref['id'])) from exc
        notes.append(IMAGE_NOW)
    if 'pinned_availability_zone' not in server:
        notes.append('the compute API (before 2.96) does not show the '
                     'availability zone the boot asked for: left out')
    return Subject(
        kind='server', flavor=nova_query.Flavor.from_api(embedded),
        image=image, is_bfv=is_bfv, project_id=server.get('tenant_id'),
        availability_zone=server.get('pinned_availability_zone'),
        in_server_group=bool(server.get('server_groups')), server=server,
        current_host=server.get('OS-EXT-SRV-ATTR:hypervisor_hostname'),
        notes=notes)


def for_image_and_flavor(compute, image_api, image=None, flavor=None,
                         resources=None, availability_zone=None,
                         project_id=None):
    """A Subject for booting ``image`` with ``flavor`` (either may be
    missing: no image, or a flavor made of ``resources``)."""
    notes = []
    found_image = image_from_glance(image_api, image) if image else None
    if flavor:
        found_flavor = nova_query.Flavor.from_api(compute.flavor(flavor))
    else:
        resources = dict(resources or {})
        found_flavor = nova_query.Flavor(
            '(--resources)', resources.get('VCPU', 0),
            resources.get('MEMORY_MB', 0), resources.get('DISK_GB', 0))
        notes.append('no --flavor: a flavor of %s with no extra specs'
                     % ', '.join('%s=%s' % kv for kv in sorted(
                         resources.items())))
    if found_image is None:
        notes.append('no --image: the flavor alone, as for a boot whose '
                     'image asks nothing')
    return Subject(kind='image and flavor', flavor=found_flavor,
                   image=found_image, project_id=project_id,
                   availability_zone=availability_zone, notes=notes)


@dataclasses.dataclass
class Settings:
    """How nova-scheduler is configured, as far as the tool knows."""

    options: dict
    options_from: str
    ours_loaded: bool
    filter_settings: object = None
    nova_release: int = None
    owner_nova: str = nova_scheduler.AUTO


def explain(subject, compute, placement, settings):
    """The whole answer, as a dict (the command's document)."""
    release, release_by = nova_scheduler.release_for(
        compute.max_version(), settings.nova_release)
    _refused_by_nova_api(subject, release, settings.options)
    fleet = survey_mod.take(placement)
    standard = frozenset(rc for rc in placement.list_resource_classes()
                         if not rc.startswith(nova_query.CUSTOM))
    owner, owner_by = nova_scheduler.owner_nova(
        release, placement, {h.uuid: h.name for h in fleet.hosts.values()},
        settings.owner_nova)
    cloud = nova_filters.Cloud(
        release=release, options=settings.options,
        standard_classes=standard, owner_nova=owner,
        owner_nova_because=owner_by)
    if subject.availability_zone or cloud.option(
            'scheduler', 'limit_tenants_to_placement_aggregate') or \
            cloud.option('scheduler', 'enable_isolated_aggregate_filtering'):
        cloud.aggregates = [
            nova_filters.Aggregate(a.get('uuid'), a.get('name'),
                                   dict(a.get('metadata') or {}))
            for a in compute.aggregates()]
    request = nova_query.Request(
        flavor=subject.flavor, image=subject.image, is_bfv=subject.is_bfv,
        project_id=subject.project_id,
        availability_zone=subject.availability_zone,
        in_server_group=subject.in_server_group, release=release)
    document = {
        'query': None, 'queries': [], 'parameters': [], 'terms': [],
        'nova': {'release': release, 'release_known_by': release_by,
                 'options_from': settings.options_from,
                 'image_type_filter_loaded': settings.ours_loaded,
                 'owner_nova': owner_by},
        'subject': subject.describe(), 'request_filters': [],
        'not_covered': list(nova_query.NOT_COVERED), 'explains': EXPLAINS,
        'placement': None, 'no_valid_host': None, 'hosts': []}
    if cloud.option('filter_scheduler', 'pci_in_placement'):
        document['not_covered'].insert(0, '[filter_scheduler] '
                                       'pci_in_placement is on: PCI request '
                                       'groups are missing from this query')
    outcomes = []
    try:
        nova_filters.run(cloud, request, outcomes)
        if settings.ours_loaded and settings.filter_settings.enforce:
            nova_filters.run_ours(_pipeline(settings, placement), request,
                                  outcomes)
        elif settings.ours_loaded:
            outcomes.append(nova_filters.would_ours(
                _pipeline(settings, placement), request))
    except filter_exceptions.NoValidHost as exc:
        document['no_valid_host'] = (
            'a request filter fails the request before Placement is asked: '
            '%s' % exc)
        return document
    finally:
        document['request_filters'] = [dataclasses.asdict(o)
                                       for o in outcomes]
    limit = cloud.option('scheduler', 'max_placement_results')
    queries = [nova_query.build(request, standard, limit=limit)]
    if queries[0].cpu_pinning_requested and not cloud.option(
            'workarounds', 'disable_fallback_pcpu_query'):
        queries.append(nova_query.build(request, standard, limit=limit,
                                        pinning=False))
    document['query'] = queries[0].url()
    document['queries'] = [q.url() for q in queries]
    document['parameters'] = [{'parameter': k, 'value': str(v)}
                              for k, v in queries[0].params()]
    document['terms'] = [dict(term, query=n + 1)
                         for n, q in enumerate(queries)
                         for term in _terms(q)]
    offered, answers = set(), []
    for query in queries:
        found, answered = _ask(placement, query)
        offered |= set(found)
        answers.append(answered)
    answered = dict(answers[0], hosts=len(offered),
                    candidates=sum(a['candidates'] for a in answers),
                    truncated=any(a['truncated'] for a in answers),
                    error='; '.join(a['error'] for a in answers
                                    if a['error']) or None)
    document['placement'] = answered
    give_back, current_uuid = {}, None
    if subject.current_host:
        current_uuid = next((h.uuid for h in fleet.hosts.values()
                             if h.name == subject.current_host), None)
        give_back = _own_allocation(placement, subject.server.get('id'))
    services = _disabled_services(compute)
    verdicts = verdicts_mod.judge(placement, fleet, queries, offered,
                                  give_back, services, current_uuid)
    document['hosts'] = [dataclasses.asdict(v) for v in verdicts]
    if not offered and not fits_its_own_host(verdicts):
        document['no_valid_host'] = _no_valid_host(verdicts, answered)
    return document


def fits_its_own_host(verdicts):
    """Whether the server's own host fits it with its allocation given
    back: then the server has a valid host, even where Placement offers
    no other (the last free ironic node taken, say)."""
    return any(v.result == verdicts_mod.FITS_WITH_OWN for v in verdicts)


def _refused_by_nova_api(subject, release, options):
    """NovaRefuses for a flavor and image nova-api refuses (a conflict, a
    value Nova does not accept), before anything is asked of Placement:
    Nova's request filters and query on a scratch request."""
    def scratch():
        return nova_query.Request(flavor=subject.flavor, image=subject.image,
                                  is_bfv=subject.is_bfv, release=release)
    try:
        nova_filters.run(nova_filters.Cloud(
            release=release, options=options, owner_nova=False), scratch())
    except filter_exceptions.NoValidHost:
        pass  # the real run says it, with the cloud's facts
    nova_query.build(scratch(), ())


def _pipeline(settings, placement):
    return pipeline_mod.RequestFilterPipeline.from_settings(
        settings.filter_settings, placement=placement)


def _terms(query):
    terms = []
    for param, value in query.params():
        if param in ('limit', 'group_policy'):
            continue
        if param.startswith('member_of'):
            uuids = value.partition(':')[2].split(',')
            sources = (query.sources(param, value) if not
                       value.startswith('!') else sorted({
                           s for u in uuids
                           for s in query.sources(param, '!' + u)}))
            terms.append({'parameter': param, 'term': value,
                          'from': sources})
            continue
        for part in str(value).split(','):
            name = part.split(':')[0] if param.startswith('resources') \
                else part
            terms.append({'parameter': param, 'term': part,
                          'from': query.sources(param, name)})
    return terms


def _ask(placement, query):
    """(root provider uuids offered, what Placement answered)."""
    try:
        body = placement.get_allocation_candidates(query.querystring())
    except exceptions.UnknownTraits as exc:
        return [], {'candidates': 0, 'limit': query.limit,
                    'truncated': False, 'error': (
                        'Placement does not know trait(s) %s: it answers '
                        'nova-scheduler\'s query with 400, and every such '
                        'boot ends in No valid host'
                        % ', '.join(sorted(exc.traits)))}
    offered = scheduler_client.root_providers(body)
    count = len(body.get('allocation_requests', []))
    return offered, {
        'candidates': count, 'hosts': len(offered), 'limit': query.limit,
        'truncated': query.limit is not None and count >= query.limit,
        'error': None}


def _own_allocation(placement, server_id):
    """provider uuid -> {class: amount} the server holds now."""
    body = placement.request(
        'GET', '/allocations/%s' % parse.quote(str(server_id), safe='')
    ).json()
    return {uuid: dict(held.get('resources') or {})
            for uuid, held in (body.get('allocations') or {}).items()}


def _disabled_services(compute):
    """{name: reason} of the disabled compute services, by service host
    and by the name of each of their compute nodes (a provider is named
    after its compute node: the hypervisor hostname, which is not the
    service's host on libvirt or ironic)."""
    found = {}
    for service in compute.compute_services():
        if service.get('status') == 'disabled':
            found[service.get('host')] = service.get('disabled_reason') or \
                'no reason given'
    if found:
        for node in compute.hypervisors():
            host = (node.get('service') or {}).get('host')
            if host in found and node.get('hypervisor_hostname'):
                found.setdefault(node['hypervisor_hostname'], found[host])
    return found


def _no_valid_host(verdicts, answered):
    if answered.get('error'):
        return answered['error']
    excluded = [v for v in verdicts if v.reasons]
    if not excluded:
        return 'Placement knows no compute host'
    shown = ['%s: %s' % (v.name, v.reasons[0]) for v in excluded[:3]]
    more = len(excluded) - len(shown)
    return 'none of %d compute host(s) fits: %s%s' % (
        len(verdicts), ' | '.join(shown),
        ' | and %d more' % more if more else '')
