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

"""Build ``GET /allocation_candidates`` for a RequestSpec: pure, deterministic.

Parameters come out in a fixed order with sorted values, so the same request
always gives the same URL. Trait and resource-class names are checked against
Placement's grammar, so nothing else can be smuggled into the query. Nothing
here logs or keeps state; the caller says what a fallback means.
"""

from image_type_common import exceptions
from image_type_common import placement_client as pc
from image_type_common import trait_names
from image_type_filter.conf import scheduler_client as client_conf

ROOT_REQUIRED = client_conf.ROOT_REQUIRED


def _names(values, what):
    for value in values:
        if not trait_names.is_name(value):
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


def uses_root_required(version, trait_parameter=ROOT_REQUIRED):
    """Whether root traits go in ``root_required`` (else in ``required``)."""
    return trait_parameter == ROOT_REQUIRED and version >= pc.ROOT_REQUIRED


def build_params(spec, version, trait_parameter=ROOT_REQUIRED):
    """The (key, value) pairs of the query, in a fixed order.

    Root traits go in ``root_required`` unless ``trait_parameter`` says
    ``required`` or Placement is older than 1.35; then they join the
    unsuffixed ``required`` parameter.
    """
    root_required = set(spec.root_required)
    root_forbidden = set(spec.root_forbidden)
    required = set(spec.required)
    forbidden = set(spec.forbidden)
    if (root_required or root_forbidden or required or forbidden) and (
            version < pc.CANDIDATES_REQUIRED):
        raise exceptions.PlacementTooOld(
            'Placement microversion %s cannot filter allocation candidates '
            'by trait (needs 1.17); upgrade Placement or turn the filter off'
            % pc.version_str(version))
    if not uses_root_required(version, trait_parameter):
        required |= root_required
        forbidden |= root_forbidden
        root_required, root_forbidden = set(), set()
    params = []
    if spec.resources:
        params.append(('resources', _resources(spec.resources)))
    if required or forbidden:
        params.append(('required', _traits(required, forbidden, version)))
    if root_required or root_forbidden:
        params.append(('root_required',
                       _traits(root_required, root_forbidden, version)))
    return params


def build(spec, version, trait_parameter=ROOT_REQUIRED):
    """The query string for ``GET /allocation_candidates``."""
    return pc.encode_query(build_params(spec, version, trait_parameter))
