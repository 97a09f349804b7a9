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

"""This project's request filters alone, outside Nova, then
``GET /allocation_candidates``: ``candidates --disk-format``.

A RequestSpec of our own, shaped like Nova's where the filters read it,
and the query built from it as Nova builds it; Placement's answer as the
hosts offered. The demo and the benchmarks use it too; inside Nova, Nova
builds the query itself.
"""

import dataclasses

from image_type_common import exceptions
from image_type_common import placement_client as pc
from image_type_common import text
from image_type_common import trait_names
from image_type_filter import exceptions as filter_exceptions
from image_type_filter.scheduler import trait_grammar


@dataclasses.dataclass
class ImageMeta:
    disk_format: str = None
    properties: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Flavor:
    extra_specs: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class RequestSpec:
    image: ImageMeta = None
    flavor: Flavor = dataclasses.field(default_factory=Flavor)
    is_bfv: bool = False
    resources: dict = dataclasses.field(default_factory=dict)
    required: set = dataclasses.field(default_factory=set)
    forbidden: set = dataclasses.field(default_factory=set)
    root_required: set = dataclasses.field(default_factory=set)
    root_forbidden: set = dataclasses.field(default_factory=set)

    @classmethod
    def for_boot(cls, disk_format=None, resources=None, is_bfv=False,
                 properties=None, extra_specs=None, **kwargs):
        """A boot request as Nova builds it: the image's
        ``trait:X=required`` properties are required traits, exactly as
        Nova reads them (``trait_grammar``): Nova adds them to every boot
        of the image, filters on or off. A name Placement could not take
        is a ConfigError."""
        traits = trait_grammar.image_required_traits(properties)
        for trait in sorted(traits):
            if not trait_names.is_name(trait):
                raise exceptions.ConfigError(
                    'image property %s names no valid trait'
                    % text.safe_repr(trait_grammar.IMAGE_PREFIX + trait))
        kwargs['required'] = set(kwargs.get('required', ())) | traits
        return cls(image=ImageMeta(disk_format, dict(properties or {})),
                   flavor=Flavor(dict(extra_specs or {})), is_bfv=is_bfv,
                   resources=dict(resources or {}), **kwargs)


# -- the query: pure, deterministic --------------------------------------
#
# Parameters come out in a fixed order with sorted values, so the same
# request always gives the same URL. Trait and resource-class names are
# checked against Placement's grammar, so nothing else can be smuggled into
# the query. The builder neither logs nor keeps state.

def _names(values, what):
    for value in values:
        if not trait_names.is_name(value):
            raise ValueError('invalid %s name %r' % (what, value))
    return sorted(values)


def _resources(resources):
    amounts = []
    for rc in _names(resources, 'resource class'):
        amount = resources[rc]
        if isinstance(amount, bool) or not isinstance(amount, int) or (
                amount < 1):
            raise ValueError('invalid amount %r for %s' % (amount, rc))
        amounts.append('%s:%d' % (rc, amount))
    return ','.join(amounts)


def _traits(required, forbidden):
    return ','.join(_names(required, 'trait') + [
        '!' + t for t in _names(forbidden, 'trait')])


def build_params(spec):
    """The (key, value) pairs of the query, in a fixed order: root traits
    in ``root_required``, which every Placement the client accepts has
    (``placement_client.MIN_MICROVERSION``)."""
    params = []
    if spec.resources:
        params.append(('resources', _resources(spec.resources)))
    if spec.required or spec.forbidden:
        params.append(('required', _traits(spec.required, spec.forbidden)))
    if spec.root_required or spec.root_forbidden:
        params.append(('root_required',
                       _traits(spec.root_required, spec.root_forbidden)))
    return params


def build(spec):
    """The query string for ``GET /allocation_candidates``."""
    return pc.encode_query(build_params(spec))


# -- asking Placement ------------------------------------------------------

@dataclasses.dataclass
class Candidates:
    """What Placement offered: hosts (root provider uuids), and how asked."""

    provider_uuids: list
    query: str
    filters_applied: list


def root_providers(body):
    """Root provider uuids of every allocation request, sorted."""
    summaries = body.get('provider_summaries', {})
    return sorted({summaries.get(uuid, {}).get('root_provider_uuid', uuid)
                   for request in body.get('allocation_requests', [])
                   for uuid in request.get('allocations', {})})


def get_candidates(placement, pipeline, spec, ctxt=None):
    """``pipeline`` on ``spec`` (which it changes), then Placement's
    candidates. A 400 "No such trait" names the trait: a custom one is
    NoValidHost; a standard one says Placement is older than os-traits."""
    applied = pipeline(ctxt, spec)
    query_string = build(spec)
    try:
        body = placement.get_allocation_candidates(query_string)
    except exceptions.UnknownTraits as exc:
        custom = sorted(t for t in exc.traits if t.startswith('CUSTOM_'))
        if custom:
            raise filter_exceptions.NoValidHost(
                'No compute host carries %s: Placement does not know '
                'the trait' % ', '.join(custom)) from exc
        raise exceptions.UnknownTraits(exc.traits, (
            'Placement is older than the installed os-traits: it lacks '
            'trait(s) %s; upgrade Placement or turn the filter off'
            % ', '.join(sorted(exc.traits)))) from exc
    return Candidates(root_providers(body), query_string, applied)
