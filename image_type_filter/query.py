"""Build ``GET /allocation_candidates`` for a RequestSpec: pure, deterministic.

Parameters come out in a fixed order with sorted values, so the same request
always gives the same URL. Trait and resource-class names are checked against
Placement's grammar, so nothing else can be smuggled into the query.
"""

import logging
import re

from image_type_common import exceptions
from image_type_common import placement_client as pc

LOG = logging.getLogger(__name__)

NAME = re.compile(r'^[A-Z0-9_]+$')
GRANULAR = (1, 25)
MULTI_MEMBER_OF = (1, 24)
MEMBER_OF = (1, 21)
LIMIT = (1, 16)
_warned_fallback = set()


def _names(values, what):
    for value in values:
        if not isinstance(value, str) or not NAME.match(value):
            raise ValueError('invalid %s name %r' % (what, value))
    return sorted(values)


def _resources(resources):
    _names(resources, 'resource class')
    amounts = []
    for rc in sorted(resources):
        amount = resources[rc]
        if isinstance(amount, bool) or not isinstance(amount, int) or (
                amount < 1):
            raise ValueError('invalid amount %r for %s' % (amount, rc))
        amounts.append('%s:%d' % (rc, amount))
    return ','.join(amounts)


def _traits(required, forbidden, version):
    if forbidden and version < pc.FORBIDDEN_TRAITS:
        raise exceptions.PlacementTooOld(
            'Placement microversion %s cannot forbid traits (needs 1.22)'
            % pc.version_str(version))
    tokens = _names(required, 'trait') + [
        '!' + t for t in _names(forbidden, 'trait')]
    return ','.join(tokens)


def _member_of(member_of, suffix, version):
    if member_of and version < MEMBER_OF:
        raise exceptions.PlacementTooOld('member_of needs microversion 1.21')
    if len(member_of) > 1 and version < MULTI_MEMBER_OF:
        raise exceptions.PlacementTooOld(
            'several member_of need microversion 1.24')
    params = []
    for aggregates in member_of:
        aggregates = sorted(str(a) for a in aggregates)
        for agg in aggregates:
            if not re.match(r'^[0-9a-fA-F-]{32,36}$', agg):
                raise ValueError('invalid aggregate uuid %r' % agg)
        value = aggregates[0] if len(aggregates) == 1 else (
            'in:' + ','.join(aggregates))
        params.append(('member_of' + suffix, value))
    return sorted(params)


def build_params(spec, version, trait_parameter='root_required'):
    """The (key, value) pairs of the query, in a fixed order."""
    root_required = set(getattr(spec, 'root_required', ()) or ())
    root_forbidden = set(getattr(spec, 'root_forbidden', ()) or ())
    required = set(getattr(spec, 'required', ()) or ())
    forbidden = set(getattr(spec, 'forbidden', ()) or ())
    any_traits = root_required or root_forbidden or required or forbidden
    if any_traits and version < pc.CANDIDATES_REQUIRED:
        raise exceptions.PlacementTooOld(
            'Placement microversion %s cannot filter allocation candidates '
            'by trait (needs 1.17); upgrade Placement or turn the filter off'
            % pc.version_str(version))
    use_root = (trait_parameter == 'root_required'
                and version >= pc.ROOT_REQUIRED)
    if (root_required or root_forbidden) and not use_root:
        if (trait_parameter == 'root_required'
                and version not in _warned_fallback):
            _warned_fallback.add(version)
            LOG.warning('Placement microversion %s has no root_required '
                        '(1.35): requiring root traits through the '
                        'unsuffixed required parameter instead',
                        pc.version_str(version))
        required |= root_required
        forbidden |= root_forbidden
        root_required, root_forbidden = set(), set()
    params = []
    resources = getattr(spec, 'resources', None) or {}
    if resources:
        params.append(('resources', _resources(resources)))
    if required or forbidden:
        params.append(('required', _traits(required, forbidden, version)))
    if root_required or root_forbidden:
        params.append(('root_required',
                       _traits(root_required, root_forbidden, version)))
    params += _member_of(getattr(spec, 'member_of', None) or [], '', version)
    groups = getattr(spec, 'groups', None) or {}
    if groups and version < GRANULAR:
        raise exceptions.PlacementTooOld(
            'suffixed request groups need microversion 1.25')
    for suffix in sorted(groups):
        if not re.match(r'^[a-zA-Z0-9_-]{1,64}$', str(suffix)):
            raise ValueError('invalid request group suffix %r' % suffix)
        group = groups[suffix]
        params.append(('resources' + suffix, _resources(group.resources)))
        if group.required or group.forbidden:
            params.append(('required' + suffix, _traits(
                group.required, group.forbidden, version)))
        params += _member_of(group.member_of, suffix, version)
    policy = getattr(spec, 'group_policy', None)
    if policy:
        if policy not in ('none', 'isolate'):
            raise ValueError('invalid group_policy %r' % policy)
        params.append(('group_policy', policy))
    elif len(groups) > 1:
        params.append(('group_policy', 'none'))
    limit = getattr(spec, 'limit', None)
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError('invalid limit %r' % limit)
        if version >= LIMIT:
            params.append(('limit', str(limit)))
    return params


def build(spec, version, trait_parameter='root_required'):
    """The query string for ``GET /allocation_candidates``."""
    return pc.encode_query(build_params(spec, version, trait_parameter))
