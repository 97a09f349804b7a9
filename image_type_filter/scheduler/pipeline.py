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

"""The request filters nova-scheduler (and candidates --disk-format) runs, in
order, as one Nova-shaped ``(ctxt, request_spec)`` callable.

A filter returns True when it added a constraint to the request and raises
``image_type_filter.exceptions.NoValidHost`` when the request cannot be
placed. The three filters are this project's own and always built, in a
fixed order (the image type first, so its refusal names the format); each
honours its own on/off option. There is no plug-in point: a third-party
filter belongs in Nova's own list.

``outcome`` runs them on a copy instead and says what they would add or
refuse, leaving the request as it was: what log-only mode logs, and what
``rebuild_refusal`` compares with a host's traits. That is the check Nova
skips: nova-scheduler runs no request filter on a rebuild with a new image,
only host filters with ``RUN_ON_REBUILD``. Nova-free, so the default test
run covers what nova-scheduler runs.
"""

import dataclasses
import logging
import time
import types

from image_type_filter import exceptions
from image_type_filter.scheduler import image_metadata_prefilter
from image_type_filter.scheduler import image_type_support
from image_type_filter.scheduler import isolation
from image_type_filter.scheduler import spec_fields
from image_type_filter.scheduler import trait_catalog

LOG = logging.getLogger(__name__)

CONSTRAINTS = ('root_required', 'root_forbidden', 'required', 'forbidden')
#: What the filters read of a request, copied onto a scratch one (and
#: checked as RequestSpec fields at start-up: ``nova.compat.NEEDS``).
READ = ('image', 'flavor', 'is_bfv', 'instance_uuid')


def _constraints(spec):
    return {name: set(getattr(spec, name, ()) or ()) for name in CONSTRAINTS}


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What the filters would do to one request."""

    #: Constraint name -> the traits they would add, sorted; only those
    #: with something added.
    added: dict = dataclasses.field(default_factory=dict)
    #: Why they would refuse the request (the fault's reason), or None.
    refusal: str = None


class RequestFilterPipeline:
    """Runs the request filters in order."""

    def __init__(self, filters):
        self.filters = list(filters)

    @classmethod
    def from_settings(cls, settings, placement=None,
                      image_property_names=None, host_guests=None):
        """Every filter, built from ``settings`` (a FilterSettings).

        ``placement``: a PlacementClient, or None (no refusal that needs to
        ask Placement); ``image_property_names``: inside Nova, the image
        properties Nova keeps; ``host_guests``: inside Nova, the
        architectures Nova's records say compute nodes run (the
        image-metadata prefilter's, see there). A filter that refuses its
        configuration stops the load with its own ConfigError, whether it
        is enabled or not.
        """
        # One catalogue for every filter: one read, not one each.
        catalog = trait_catalog.for_placement(placement, settings)
        filters = (
            image_type_support.RequireImageTypeSupport(settings, catalog),
            isolation.IsolateImageProperties(settings, catalog,
                                             image_property_names),
            image_metadata_prefilter.ImageMetadataPrefilter(
                settings, catalog, placement, host_guests))
        return cls((f.name, f) for f in filters)

    def describe_trait(self, trait, request_spec=None):
        """Which filter rule asks for ``trait`` (in ``request_spec``, when
        given), for explanations, or None."""
        for _, request_filter in self.filters:
            describe = getattr(request_filter, 'describe_trait', None)
            text = describe(trait, request_spec) if describe else None
            if text:
                return text
        return None

    def __call__(self, ctxt, request_spec):
        """Run every filter; return the names of those that added something."""
        added = []
        debug = LOG.isEnabledFor(logging.DEBUG)
        for name, request_filter in self.filters:
            before = _constraints(request_spec) if debug else None
            start = time.perf_counter()
            if request_filter(ctxt, request_spec):
                added.append(name)
            if debug:
                after = _constraints(request_spec)
                LOG.debug('request filter %s took %.1f us, added %s', name,
                          (time.perf_counter() - start) * 1e6,
                          {k: sorted(after[k] - before[k]) for k in after
                           if after[k] - before[k]} or 'nothing')
        return added

    def outcome(self, ctxt, request_spec, keep_constraints=True):
        """What the filters would add to ``request_spec``, or why they
        would refuse it, without changing it (an Outcome).

        ``keep_constraints``: start from the request's own constraints, so
        only what the filters add beyond them counts; False starts from
        none (a rebuild's request carries its first boot's).
        """
        copy = types.SimpleNamespace(**{
            name: spec_fields.field(request_spec, name) for name in READ})
        constraints = _constraints(request_spec) if keep_constraints else {}
        for name in CONSTRAINTS:
            setattr(copy, name, constraints.get(name, set()))
        before = _constraints(copy)
        try:
            self(ctxt, copy)
        except exceptions.NoValidHost as exc:
            return Outcome(refusal=str(exc))
        after = _constraints(copy)
        return Outcome({name: tuple(sorted(after[name] - before[name]))
                        for name in CONSTRAINTS
                        if after[name] - before[name]})

    def rebuild_refusal(self, request_spec, host_traits):
        """Why a host cannot take a rebuild's new image, or None when it
        can: what the filters would require and forbid, from none of the
        first boot's constraints, against the host's traits.

        ``host_traits()`` returns the host's traits (one Placement read); it
        is called only when the filters ask for or forbid something.
        """
        outcome = self.outcome(None, request_spec, keep_constraints=False)
        if outcome.refusal is not None:
            return outcome.refusal
        added = outcome.added
        required = set(added.get('root_required', ())) | set(
            added.get('required', ()))
        forbidden = set(added.get('root_forbidden', ())) | set(
            added.get('forbidden', ()))
        if not required and not forbidden:
            return None
        traits = host_traits()
        lacking = sorted(required - traits)
        unwanted = sorted(forbidden & traits)
        parts = []
        if lacking:
            parts.append('the new image needs %s' % ', '.join(lacking))
        if unwanted:
            parts.append('the host has %s, which the new image must not '
                         'meet' % ', '.join(unwanted))
        return '; '.join(parts) or None
