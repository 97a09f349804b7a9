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

"""Nova's request filters, rebuilt without Nova: all fourteen of Nova 34.

``nova.scheduler.request_filter.ALL_REQUEST_FILTERS`` runs, in this order,
on every boot before the allocation-candidate query is built
(``nova_query``). ``FILTERS`` lists each with the first release that has
it and whether this module builds it (``BUILT``), builds the part Placement
sees from the flavor and image but not the rest (``PARTLY``), or does not
(``NOT_COVERED``: it needs Neutron's ports and segments). Each filter reads
what Nova reads (the nova.conf option that turns it on, the flavor, the
image, the host aggregates' metadata, the project and availability zone)
from a ``Cloud``, and writes into a ``nova_query.Request`` with the reason.

``OWNER_NOVA`` (``owner_nova_filter``, Nova 34) depends on the lowest
nova-compute service version in every cell, which no API gives: the Cloud
carries the answer and how it was reached (``Cloud.owner_nova``).

A filter that fails the request (Nova's ``RequestFilterFailed``) raises
NoValidHost with Nova's reason: the boot ends in "No valid host" before
Placement is asked.
"""

import dataclasses

import os_traits

from image_type_common import image_metadata
from image_type_common import image_types
from image_type_filter import exceptions as filter_exceptions
from image_type_filter.client import nova_query
from image_type_filter.client import request_spec
from image_type_filter.scheduler import trait_grammar

BUILT, PARTLY, NOT_COVERED = 'built', 'partly built', 'not covered'
# What a filter did to one request.
ADDED, NOTHING, OFF, ABSENT, FAILS, LOG_ONLY = (
    'added', 'nothing to add', 'off', 'not in this Nova',
    'fails the request', 'log only')

TENANT_METADATA_KEY = 'filter_tenant_id'
AZ_METADATA_KEY = 'availability_zone'
#: transform_image_metadata's prefix_map, literally.
METADATA_PREFIXES = {
    'hw_cdrom_bus': 'COMPUTE_STORAGE_BUS',
    'hw_disk_bus': 'COMPUTE_STORAGE_BUS',
    'hw_video_model': 'COMPUTE_GRAPHICS_MODEL',
    'hw_vif_model': 'COMPUTE_NET_VIF_MODEL',
    'hw_architecture': 'HW_ARCH',
    'hw_emulation_architecture': 'COMPUTE_ARCH',
    'hw_viommu_model': 'COMPUTE_VIOMMU',
}
#: The nova.conf options nova-scheduler reads for its query, (group, name)
#: -> Nova's default.
NOVA_OPTIONS = {
    ('scheduler', 'limit_tenants_to_placement_aggregate'): False,
    ('scheduler', 'placement_aggregate_required_for_tenants'): False,
    ('scheduler', 'query_placement_for_image_type_support'): False,
    ('scheduler', 'enable_isolated_aggregate_filtering'): False,
    ('scheduler', 'image_metadata_prefilter'): False,
    ('scheduler', 'query_placement_for_routed_network_aggregates'): False,
    ('scheduler', 'max_placement_results'): 1000,
    ('filter_scheduler', 'pci_in_placement'): False,
    ('workarounds', 'disable_fallback_pcpu_query'): False,
}


@dataclasses.dataclass(frozen=True)
class Aggregate:
    uuid: str
    name: str
    metadata: dict


@dataclasses.dataclass
class Cloud:
    """What the request filters read of the cloud."""

    release: int = nova_query.NEWEST
    #: nova.conf's values of NOVA_OPTIONS (Nova's defaults where unset).
    options: dict = dataclasses.field(
        default_factory=lambda: dict(NOVA_OPTIONS))
    aggregates: list = dataclasses.field(default_factory=list)
    #: The resource classes Nova's os-resource-classes knows.
    standard_classes: frozenset = frozenset()
    #: Whether owner_nova_filter adds OWNER_NOVA (every nova-compute at
    #: service version 73 or later), and why the tool thinks so.
    owner_nova: bool = True
    owner_nova_because: str = ''

    def option(self, group, name):
        return self.options.get((group, name), NOVA_OPTIONS[(group, name)])


@dataclasses.dataclass
class Outcome:
    name: str
    coverage: str
    result: str
    detail: str = ''


def _destination_aggregates(request, uuids, source):
    request.aggregates.append(','.join(uuids))
    request.because('member_of', 'in:' + ','.join(sorted(uuids)), source)


def require_tenant_aggregate(cloud, request):
    if not cloud.option('scheduler', 'limit_tenants_to_placement_aggregate'):
        return OFF, '[scheduler] limit_tenants_to_placement_aggregate off'
    mine = sorted({a.uuid for a in cloud.aggregates
                   if any(k.startswith(TENANT_METADATA_KEY) and
                          v == request.project_id
                          for k, v in a.metadata.items())})
    if mine:
        _destination_aggregates(request, mine, 'require_tenant_aggregate: '
                                'aggregates for project %s'
                                % request.project_id)
        return ADDED, 'member_of the aggregates of project %s' % \
            request.project_id
    if cloud.option('scheduler', 'placement_aggregate_required_for_tenants'):
        raise filter_exceptions.NoValidHost(
            'No hosts available for tenant (require_tenant_aggregate: '
            'project %s has no aggregate)' % request.project_id)
    return NOTHING, 'project %s has no aggregate' % request.project_id


def map_az_to_placement_aggregate(cloud, request):
    zone = request.availability_zone
    if not zone:
        return NOTHING, 'no availability zone requested'
    found = [a.uuid for a in cloud.aggregates
             if a.metadata.get(AZ_METADATA_KEY) == zone]
    if not found:
        return NOTHING, 'no aggregate has availability_zone=%s' % zone
    _destination_aggregates(request, found, 'map_az_to_placement_aggregate: '
                            'availability zone %s' % zone)
    return ADDED, 'member_of availability zone %s' % zone


def require_image_type_support(cloud, request):
    if not cloud.option('scheduler', 'query_placement_for_image_type_support'):
        return OFF, '[scheduler] query_placement_for_image_type_support off'
    if request.is_bfv:
        return NOTHING, 'volume-backed'
    disk_format = request.image.disk_format if request.image else None
    trait = 'COMPUTE_IMAGE_TYPE_%s' % str(disk_format).upper()
    if not hasattr(os_traits, trait):
        return NOTHING, 'no os-traits trait %s' % trait
    _root(request, trait, 'require_image_type_support: disk_format %s'
          % disk_format)
    return ADDED, trait


def compute_status_filter(cloud, request):
    trait = os_traits.COMPUTE_STATUS_DISABLED
    request.root_forbidden.add(trait)
    request.because('root_required', '!' + trait, 'compute_status_filter: '
                    'the compute service is disabled')
    return ADDED, '!' + trait


def isolate_aggregates(cloud, request):
    if not cloud.option('scheduler', 'enable_isolated_aggregate_filtering'):
        return OFF, '[scheduler] enable_isolated_aggregate_filtering off'
    required = nova_query.all_required_traits(request,
                                              cloud.standard_classes)
    isolated = sorted(
        a.uuid for a in cloud.aggregates
        if trait_grammar.aggregate_required_traits(a.metadata) - required)
    if not isolated:
        return NOTHING, 'no aggregate requires a trait the request lacks'
    request.forbidden_aggregates |= set(isolated)
    names = {a.uuid: a.name for a in cloud.aggregates}
    for uuid in isolated:
        request.because('member_of', '!' + uuid, 'isolate_aggregates: '
                        'aggregate %s requires a trait the flavor and '
                        'image do not' % names.get(uuid, uuid))
    return ADDED, 'not member_of %s' % ', '.join(names.get(u, u)
                                                  for u in isolated)


def transform_image_metadata(cloud, request):
    if not cloud.option('scheduler', 'image_metadata_prefilter'):
        return OFF, '[scheduler] image_metadata_prefilter off'
    found = []
    for key, prefix in METADATA_PREFIXES.items():
        value = request.props.get(key)
        if value is None:
            continue
        value = image_metadata.canonical(key, value) or str(value)
        trait = '%s_%s' % (prefix, value.replace('-', '_').upper())
        if not hasattr(os_traits, trait):
            return NOTHING, ('%s is not an os-traits trait, so Nova adds '
                             'none of this image\'s' % trait)
        found.append((trait, key, value))
    for trait, key, value in found:
        _root(request, trait, 'transform_image_metadata: image property '
              '%s=%s' % (key, value))
    return (ADDED, ', '.join(t for t, _, _ in found)) if found else \
        (NOTHING, 'no property it reads')


def accelerators_filter(cloud, request):
    profile = request.flavor.extra_specs.get('accel:device_profile')
    if not profile:
        return NOTHING, 'no accel:device_profile'
    _root(request, os_traits.COMPUTE_ACCELERATORS, 'accelerators_filter: '
          'flavor extra spec accel:device_profile=%s' % profile)
    return ADDED, '%s (the device profile\'s own request groups are not ' \
        'covered)' % os_traits.COMPUTE_ACCELERATORS


def _flavor_image_bool(request, key):
    """(flavor value, image value) as booleans or None; both set and
    different: NovaRefuses, as Nova's FlavorImageConflict."""
    flavor = request.flavor.extra_specs.get('hw:' + key)
    image = request.props.get('hw_' + key)
    flavor = None if flavor is None else nova_query.bool_from_string(flavor)
    image = None if image is None else nova_query.bool_from_string(image)
    if flavor is not None and image is not None and flavor != image:
        raise nova_query.NovaRefuses(
            'Nova refuses flavor %s with this image: hw:%s and hw_%s '
            'differ' % (request.flavor.name, key, key))
    return flavor, image


def packed_virtqueue_filter(cloud, request):
    flavor, image = _flavor_image_bool(request, 'virtio_packed_ring')
    if not (flavor or image):
        return NOTHING, 'no packed virtqueue asked for'
    _root(request, os_traits.COMPUTE_NET_VIRTIO_PACKED,
          'packed_virtqueue_filter: %s virtio_packed_ring'
          % ('flavor hw:' if flavor else 'image hw_'))
    return ADDED, os_traits.COMPUTE_NET_VIRTIO_PACKED


def routed_networks_filter(cloud, request):
    if not cloud.option('scheduler',
                        'query_placement_for_routed_network_aggregates'):
        return OFF, ('[scheduler] query_placement_for_routed_network_'
                     'aggregates off')
    return NOTHING, 'on, but not rebuilt'


def remote_managed_ports_filter(cloud, request):
    return NOTHING, 'not rebuilt'


def ephemeral_encryption_filter(cloud, request):
    flavor, image = _flavor_image_bool(request, 'ephemeral_encryption')
    if not (flavor or image):
        return NOTHING, 'no ephemeral encryption asked for'
    why = 'ephemeral_encryption_filter: %s ephemeral_encryption' % (
        'flavor hw:' if flavor else 'image hw_')
    _root(request, os_traits.COMPUTE_EPHEMERAL_ENCRYPTION, why)
    added = [os_traits.COMPUTE_EPHEMERAL_ENCRYPTION]
    fmt = _unique(request, 'ephemeral_encryption_format')
    if fmt:
        if fmt not in nova_query.EPHEMERAL_ENCRYPTION_FORMATS:
            raise nova_query.NovaRefuses(
                'Nova refuses ephemeral encryption format %s' % fmt)
        trait = 'COMPUTE_EPHEMERAL_ENCRYPTION_%s' % fmt.upper()
        _root(request, trait, why + ', format %s' % fmt)
        added.append(trait)
    return ADDED, ', '.join(added)


def virtio_sound_filter(cloud, request):
    model = _unique(request, 'sound_model')
    if model and model not in nova_query.SOUND_MODELS:
        raise nova_query.NovaRefuses('Nova refuses sound model %s' % model)
    if model != 'virtio':
        return NOTHING, 'no virtio sound device'
    _root(request, 'COMPUTE_SOUND_MODEL_VIRTIO',
          'virtio_sound_filter: sound model virtio')
    return ADDED, 'COMPUTE_SOUND_MODEL_VIRTIO'


TPM_SECRET_SECURITY = {
    'user': 'COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER',
    'host': 'COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST',
    'deployment': 'COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT',
}


def tpm_secret_security_filter(cloud, request):
    if _unique(request, 'tpm_version') is None:
        return NOTHING, 'no vTPM'
    security = request.flavor.extra_specs.get('hw:tpm_secret_security') \
        or 'user'
    trait = TPM_SECRET_SECURITY.get(security)
    if trait is None:
        raise filter_exceptions.NoValidHost(
            "TPM secret security '%s' is not supported." % security)
    _root(request, trait, 'tpm_secret_security_filter: vTPM with secret '
          'security %s' % security)
    return ADDED, trait


def owner_nova_filter(cloud, request):
    trait = os_traits.OWNER_NOVA
    if not cloud.owner_nova:
        return NOTHING, cloud.owner_nova_because
    _root(request, trait, 'owner_nova_filter: every nova-compute at service '
          'version 73 or later')
    return ADDED, trait


def _our_spec(request):
    """This project's RequestSpec for what nova-scheduler hands its
    filters."""
    image = request.image or nova_query.Image()
    return request_spec.RequestSpec(
        image=request_spec.ImageMeta(image.disk_format,
                                     dict(image.properties)),
        flavor=request_spec.Flavor(dict(request.flavor.extra_specs)),
        is_bfv=request.is_bfv, root_required=set(request.root_required),
        root_forbidden=set(request.root_forbidden))


def would_ours(pipeline, request):
    """Under ``[image_type_filter] enforce = False`` this project's filters
    change no request (they log what they would do): an Outcome saying
    what that is, the request left as it is."""
    outcome = pipeline.outcome(None, _our_spec(request))
    if outcome.refusal:
        detail = 'would refuse: %s' % outcome.refusal
    else:
        detail = 'would add %s' % (', '.join(
            '%s %s' % (name, ','.join(traits))
            for name, traits in sorted(outcome.added.items())) or 'nothing')
    return Outcome('image_type_filter', BUILT, LOG_ONLY,
                   '[image_type_filter] enforce = False: %s' % detail)


def run_ours(pipeline, request, outcomes=None):
    """This project's request filters (``pipeline``, as nova-scheduler
    built them from the same nova.conf) after Nova's, as
    ``image_type_filter.nova.integration`` runs them when they enforce:
    what each adds to the root, with the rule that asked for it. An
    Outcome per filter, appended to ``outcomes``; NoValidHost ends it."""
    spec = _our_spec(request)
    outcomes = [] if outcomes is None else outcomes
    for name, one in pipeline.filters:
        required, forbidden = set(spec.root_required), \
            set(spec.root_forbidden)
        try:
            one(None, spec)
        except filter_exceptions.NoValidHost as exc:
            outcomes.append(Outcome('image_type_filter.' + name, BUILT,
                                    FAILS, str(exc)))
            raise
        added = sorted(spec.root_required - required) + [
            '!' + t for t in sorted(spec.root_forbidden - forbidden)]
        for term in added:
            trait = term.lstrip('!')
            (request.root_forbidden if term.startswith('!')
             else request.root_required).add(trait)
            request.because('root_required', term,
                            _ours_because(pipeline, spec, trait))
        outcomes.append(Outcome('image_type_filter.' + name, BUILT,
                                ADDED if added else NOTHING,
                                ', '.join(added)))
    return outcomes


def _ours_because(pipeline, spec, trait):
    if trait.startswith(image_types.PREFIX):
        return 'image-type-filter require_image_type_support: disk_format ' \
            '%s' % spec.image.disk_format
    return 'image-type-filter %s' % (pipeline.describe_trait(trait, spec)
                                     or 'request filter')


def _unique(request, key):
    """hardware._get_unique_flavor_image_meta (a conflict: NovaRefuses)."""
    flavor = request.flavor.extra_specs.get('hw:' + key)
    image = request.props.get('hw_' + key)
    if flavor and image and flavor != image:
        raise nova_query.NovaRefuses(
            'Nova refuses flavor %s with this image: hw:%s=%s conflicts '
            'with hw_%s=%s' % (request.flavor.name, key, flavor, key, image))
    return flavor or image


def _root(request, trait, source):
    request.root_required.add(trait)
    request.because('root_required', trait, source)


@dataclasses.dataclass(frozen=True)
class RequestFilter:
    name: str
    since: int
    coverage: str
    run: object
    #: What the tool leaves out, for PARTLY and NOT_COVERED.
    gap: str = ''


#: ALL_REQUEST_FILTERS of Nova 34, in its order.
FILTERS = (
    RequestFilter('require_tenant_aggregate', 31, BUILT,
                  require_tenant_aggregate),
    RequestFilter('map_az_to_placement_aggregate', 31, BUILT,
                  map_az_to_placement_aggregate),
    RequestFilter('require_image_type_support', 31, BUILT,
                  require_image_type_support),
    RequestFilter('compute_status_filter', 31, BUILT, compute_status_filter),
    RequestFilter('isolate_aggregates', 31, BUILT, isolate_aggregates),
    RequestFilter('transform_image_metadata', 31, BUILT,
                  transform_image_metadata),
    RequestFilter('accelerators_filter', 31, PARTLY, accelerators_filter,
                  'the Cyborg device profile\'s request groups'),
    RequestFilter('packed_virtqueue_filter', 31, BUILT,
                  packed_virtqueue_filter),
    RequestFilter('routed_networks_filter', 31, NOT_COVERED,
                  routed_networks_filter,
                  'member_of the aggregates of the requested networks\' '
                  'segments (Neutron)'),
    RequestFilter('remote_managed_ports_filter', 31, NOT_COVERED,
                  remote_managed_ports_filter,
                  'COMPUTE_REMOTE_MANAGED_PORTS, required when a port is '
                  'remote-managed (Neutron)'),
    RequestFilter('ephemeral_encryption_filter', 31, BUILT,
                  ephemeral_encryption_filter),
    RequestFilter('virtio_sound_filter', 33, BUILT, virtio_sound_filter),
    RequestFilter('tpm_secret_security_filter', 33, BUILT,
                  tpm_secret_security_filter),
    RequestFilter('owner_nova_filter', 34, BUILT, owner_nova_filter),
)


def run(cloud, request, outcomes=None):
    """Every filter of ``cloud.release`` on ``request``, in Nova's order:
    an Outcome per filter of FILTERS (ABSENT for those the release lacks),
    appended to ``outcomes`` as they run. NoValidHost or NovaRefuses end
    it, as in Nova (the failing filter's Outcome says FAILS)."""
    outcomes = [] if outcomes is None else outcomes
    for one in FILTERS:
        if cloud.release < one.since:
            outcomes.append(Outcome(one.name, one.coverage, ABSENT,
                                    'from Nova %d' % one.since))
            continue
        try:
            result, detail = one.run(cloud, request)
        except filter_exceptions.NoValidHost as exc:
            outcomes.append(Outcome(one.name, one.coverage, FAILS, str(exc)))
            raise
        if one.gap and result != OFF:
            detail = '%s; not covered: %s' % (detail, one.gap)
        outcomes.append(Outcome(one.name, one.coverage, result, detail))
    return outcomes
