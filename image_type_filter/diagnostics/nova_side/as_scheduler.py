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

"""For a real server, image or flavor: nova-scheduler's query, by Nova's
own code.

Runs where Nova is installed, with nova-scheduler's nova.conf: Nova is
imported when ``load_nova`` is called, which first looks up every Nova
name used here (``compat.SEAMS``, part ``candidates``). Where it runs,
what it reads, asks and explains is doc/source/admin/troubleshooting.rst's
"Why did this server find no host?"; what the answer does not explain is
said in it (``NOT_COVERED``).
"""

import contextlib
import dataclasses
import logging
from logging import handlers
import sys
from urllib import parse
import uuid
import warnings

from image_type_common import exceptions
from image_type_common import text
from image_type_filter import exceptions as filter_exceptions
from image_type_filter.diagnostics import our_filters
from image_type_filter.diagnostics import survey as survey_mod
from image_type_filter.diagnostics import verdicts as verdicts_mod
from image_type_filter.diagnostics.nova_side import cloud as cloud_mod
from image_type_filter.nova import compat
from image_type_filter.scheduler import spec_fields

LOG = logging.getLogger(__name__)
OUR_FILTERS = 'image_type_filter.nova.all_filters'
#: A request filter's result: what it returned (Nova's filters return
#: whether they were applied), or the refusal it raised.
APPLIED, NOT_APPLIED, FAILS = 'applied', 'not applied', 'fails'
#: What the request filters log about a request, captured per filter.
FILTER_LOGGERS = ('nova.scheduler.request_filter', 'image_type_filter')
#: Nova's ``trace_request_filter`` line, left out of the details.
TIMING = 'Request filter %r took %.1f seconds'
NEEDS_NOVA = ('--server, --image and --flavor run Nova\'s own code with '
              'nova-scheduler\'s nova.conf, on a host where Nova is '
              'installed')
NOT_COVERED = (
    'nova-scheduler\'s host filters and the claim (they run on the hosts '
    'Placement offers: a "No valid host" with candidates listed here is '
    'theirs, "Filtering removed all hosts" in nova-scheduler\'s log)',
    'what Nova does not keep in the request spec (a host or node the boot '
    'asked for, its ports\' and accelerators\' resource requests, routed '
    'networks): absent from this query')
EXPLAINS = ('Explains what Placement leaves out (the query\'s traits, '
            'resources and aggregates), host by host.')


def load_nova(config_files, config_dirs=()):
    """An admin context of Nova configured from nova-scheduler's nova.conf,
    with Nova's objects registered and its filters loaded as its host
    manager loads them (this project's request filters among them when
    ``available_filters`` names them). ConfigError when Nova cannot be
    imported or no nova.conf is given."""
    if not config_files and not config_dirs:
        raise exceptions.ConfigError(
            '%s: give that nova.conf with --config-file' % NEEDS_NOVA)
    try:
        # Nova's libraries warn of their own deprecations as they load:
        # not the operator's business, and the command's errors are one
        # line.
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            from nova import config
            from nova import context
            from nova import objects
            from nova.scheduler import filters
    except ImportError as exc:
        raise exceptions.ConfigError('%s: cannot import Nova here (%s)'
                                     % (NEEDS_NOVA, exc)) from exc
    nova = compat.resolve((compat.CANDIDATES,))
    if nova.missing:
        raise exceptions.ConfigError('%s: %s' % (NEEDS_NOVA, nova.report()))
    from nova import exception
    from oslo_config import cfg
    import oslo_messaging

    argv = ['image-type-filter']
    for option, paths in (('--config-file', config_files),
                          ('--config-dir', config_dirs)):
        for path in paths:
            argv += [option, path]

    try:
        # As nova-scheduler and nova-manage start: with Nova's RPC set up
        # (nothing connects until used), since this project's request
        # filters reach each cell as Nova's do (context.target_cell makes
        # the cell's transport from [DEFAULT] transport_url).
        config.parse_args(argv)
        objects.register_all()
        filters.HostFilterHandler().get_matching_classes(
            config.CONF.filter_scheduler.available_filters)
    except (cfg.Error, exception.NovaException,
            oslo_messaging.MessagingException) as exc:
        raise exceptions.ConfigError('Nova cannot load %s: %s' % (
            ', '.join([*config_files, *config_dirs]),
            text.one_line(exc))) from exc
    return context.get_admin_context()


def for_server(ctxt, compute, name_or_id):
    """(the server, openstacksdk's, its request spec)."""
    from nova import exception
    from nova import objects

    server = compute.server(name_or_id)
    try:
        spec = objects.RequestSpec.get_by_instance_uuid(ctxt, server.id)
    except exception.RequestSpecNotFound as exc:
        raise cloud_mod.NotFound('Nova keeps no request spec for server %s'
                                 % server.id) from exc
    return server, spec


def for_image_and_flavor(ctxt, image_api, image=None, flavor=None,
                         resources=None, availability_zone=None,
                         project_id=None):
    """A request spec made as nova-api makes one for booting ``image``
    (read from Glance) with ``flavor`` (read from Nova's API database; or
    one of ``resources``, no extra specs). ConfigError for what nova-api
    refuses."""
    from nova import exception
    from nova import objects
    from nova.image import glance
    from nova.pci import request as pci_request
    from nova.virt import hardware

    glance_image = image_api.image(image) if image else None
    try:
        if flavor:
            found = _flavor(ctxt, flavor)
        else:
            resources = dict(resources or {})
            found = objects.Flavor(
                name='(--resources)', flavorid='(--resources)',
                vcpus=resources.get('VCPU', 0),
                memory_mb=resources.get('MEMORY_MB', 0),
                root_gb=resources.get('DISK_GB', 0), ephemeral_gb=0,
                swap=0, extra_specs={})
        # As nova-api's image API has it: Glance's answer translated by
        # Nova's own (private) function.
        image_meta = objects.ImageMeta.from_dict(glance._translate_from_glance(
            glance_image) if glance_image else {})
        numa = hardware.numa_get_constraints(found, image_meta)
        pci = pci_request.get_pci_requests_from_flavor(found)
        spec = objects.RequestSpec.from_components(
            ctxt, str(uuid.uuid4()), image_meta, found, numa, pci,
            {}, None, availability_zone, project_id=project_id)
    except exception.NotFound as exc:
        raise cloud_mod.NotFound('%s' % exc) from exc
    except (exception.NovaException, ValueError) as exc:
        raise exceptions.ConfigError('nova-api refuses this boot: %s'
                                     % exc) from exc
    spec.is_bfv = False
    return spec


def _flavor(ctxt, name_or_id):
    from nova import exception
    from nova import objects

    try:
        return objects.Flavor.get_by_flavor_id(ctxt, name_or_id)
    except exception.FlavorNotFound:
        return objects.Flavor.get_by_name(ctxt, name_or_id)


def describe(spec, server=None, notes=()):
    """The document's ``subject``."""
    image = spec_fields.field(spec, 'image')
    described = {
        'kind': 'server' if server else 'image and flavor',
        'flavor': spec.flavor.name, 'image': spec_fields.field(image, 'id'),
        'disk_format': spec_fields.field(image, 'disk_format'),
        'volume_backed': bool(spec_fields.field(spec, 'is_bfv')),
        'project': spec_fields.field(spec, 'project_id'),
        'availability_zone': spec_fields.field(spec, 'availability_zone'),
        'in_server_group': bool(spec_fields.field(spec, 'instance_group')),
        'notes': list(notes)}
    if server is not None:
        described.update(
            server=server.id, status=server.status,
            host=server.hypervisor_hostname,
            fault=(server.fault or {}).get('message'))
    return described


@contextlib.contextmanager
def _said():
    """The lines the request filters log in the block, kept for the answer
    rather than printed: the list yielded, filled when the block ends."""
    said, kept = [], handlers.BufferingHandler(sys.maxsize)
    loggers = [logging.getLogger(name) for name in FILTER_LOGGERS]
    saved = [(lg.level, lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.addHandler(kept)
        lg.setLevel(logging.DEBUG)
        lg.propagate = False
    try:
        yield said
    finally:
        for lg, (level, propagate) in zip(loggers, saved, strict=True):
            lg.removeHandler(kept)
            lg.setLevel(level)
            lg.propagate = propagate
        said.extend(r.getMessage() for r in kept.buffer if r.msg != TIMING)


def run_request_filters(ctxt, spec):
    """Nova's request filters, in Nova's order, on ``spec``: a list of
    {name, result, detail}; the last FAILS when one refuses the request
    (nova-scheduler then answers "No valid host" before Placement)."""
    from nova import exception
    from nova.scheduler import request_filter

    outcomes = []
    for request_filter_fn in list(request_filter.ALL_REQUEST_FILTERS):
        name = getattr(request_filter_fn, '__name__', repr(request_filter_fn))
        with _said() as said:
            try:
                ran = request_filter_fn(ctxt, spec)
            except exception.RequestFilterFailed as exc:
                outcomes.append({'name': name, 'result': FAILS,
                                 'detail': exc.format_message()})
                return outcomes
        outcomes.append({'name': name,
                         'result': APPLIED if ran else NOT_APPLIED,
                         'detail': ' | '.join(said)})
    return outcomes


def queries(ctxt, spec):
    """The query strings nova-scheduler sends for ``spec`` (after its
    request filters): the first, and for ``hw:cpu_policy=dedicated`` the
    VCPU fallback unless ``[workarounds] disable_fallback_pcpu_query``.
    NoValidHost where Nova answers so before Placement (a host the spec
    names that Nova does not know)."""
    from nova import conf
    from nova import exception
    from nova.scheduler import host_manager
    from nova.scheduler import utils

    class LazyHostManager:
        """The host manager, made only if the spec names a host."""

        def __getattr__(self, name):
            return getattr(host_manager.HostManager(), name)

    hosts = LazyHostManager()
    try:
        first = utils.resources_from_request_spec(
            ctxt, spec, hosts, enable_pinning_translate=True)
        found = [first.to_querystring()]
        if first.cpu_pinning_requested and \
                not conf.CONF.workarounds.disable_fallback_pcpu_query:
            found.append(utils.resources_from_request_spec(
                ctxt, spec, hosts,
                enable_pinning_translate=False).to_querystring())
    except exception.NoValidHost as exc:
        raise filter_exceptions.NoValidHost(exc.format_message()) from exc
    except exception.NovaException as exc:
        raise exceptions.ConfigError('Nova cannot build the query: %s'
                                     % exc.format_message()) from exc
    return found


def nova_facts(config_from):
    from nova import conf
    from nova import version

    from image_type_filter.nova import integration

    return {'release': int(version.version_string().split('.')[0]),
            'version': version.version_string(),
            'options_from': config_from,
            'image_type_filter_loaded': bool(
                OUR_FILTERS in conf.CONF.filter_scheduler.available_filters
                and integration.installed_filters())}


def explain(ctxt, spec, compute, placement, config_from, server=None,
            notes=()):
    """The whole answer, as a dict (the command's document)."""
    document = {
        'query': None, 'queries': [], 'parameters': [],
        'nova': nova_facts(config_from),
        'subject': describe(spec, server, notes), 'request_filters': [],
        'not_covered': list(NOT_COVERED), 'explains': EXPLAINS,
        'placement': None, 'no_valid_host': None, 'hosts': []}
    outcomes = run_request_filters(ctxt, spec)
    document['request_filters'] = outcomes
    if outcomes and outcomes[-1]['result'] == FAILS:
        document['no_valid_host'] = (
            'a request filter fails the request before Placement is asked: '
            '%s' % outcomes[-1]['detail'])
        return document
    try:
        sent = queries(ctxt, spec)
    except filter_exceptions.NoValidHost as exc:
        document['no_valid_host'] = str(exc)
        return document
    document['queries'] = ['/allocation_candidates?' + q for q in sent]
    document['query'] = document['queries'][0]
    document['parameters'] = [
        {'query': n + 1, 'parameter': k, 'value': v}
        for n, q in enumerate(sent) for k, v in parse.parse_qsl(q)]
    fleet = survey_mod.take(placement)
    parsed = [verdicts_mod.Query.parse(q) for q in sent]
    offered, answered = _ask(placement, parsed, sent)
    document['placement'] = answered
    give_back, current_uuid = {}, None
    current = server.hypervisor_hostname if server else None
    if current:
        current_uuid = next((h.uuid for h in fleet.hosts.values()
                             if h.name == current), None)
        give_back = _own_allocation(placement, server.id)
    services = _disabled_services(compute)
    verdicts = verdicts_mod.judge(placement, fleet, parsed, offered,
                                  give_back, services, current_uuid)
    document['hosts'] = [dataclasses.asdict(v) for v in verdicts]
    # The server's own host fitting it (its allocation given back) is a
    # valid host, where Placement offers no other (the last free ironic
    # node taken, say).
    if not offered and not any(v.result == verdicts_mod.FITS_WITH_OWN
                               for v in verdicts):
        document['no_valid_host'] = answered['error'] or \
            verdicts_mod.no_valid_host(verdicts)
    return document


def _ask(placement, queries, querystrings):
    """(root provider uuids offered to any query, what Placement answered
    to them together)."""
    offered, count, truncated, errors = set(), 0, False, []
    for query, querystring in zip(queries, querystrings, strict=True):
        try:
            body = placement.get_allocation_candidates(querystring)
        except exceptions.UnknownTraits as exc:
            errors.append(
                'Placement does not know trait(s) %s: it answers '
                'nova-scheduler\'s query with 400, and every such boot ends '
                'in No valid host' % ', '.join(sorted(exc.traits)))
            continue
        offered.update(our_filters.root_providers(body))
        found = len(body.get('allocation_requests', []))
        count += found
        truncated |= query.limit is not None and found >= query.limit
    return offered, {'candidates': count, 'hosts': len(offered),
                     'limit': queries[0].limit, 'truncated': truncated,
                     'error': '; '.join(errors) or None}


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
        if service.status == 'disabled':
            found[service.host] = service.disabled_reason or \
                'no reason given'
    if found:
        for node in compute.hypervisors():
            host = (node.service_details or {}).get('host')
            if host in found and node.name:
                found.setdefault(node.name, found[host])
    return found
