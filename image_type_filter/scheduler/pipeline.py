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

A filter returns True when it added a constraint and raises NoValidHost
when the request cannot be placed. The three are always built, in a fixed
order (the image type first, so its refusal names the format), each with
its own on/off option; there is no plug-in point.

``outcome`` runs them on a copy: what log-only mode logs, and what
``rebuild_refusal`` compares with a host's traits (Nova runs no request
filter on a rebuild). Nova-free, so the default test run covers it.
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
        """Every filter, from ``settings``; ``placement`` may be None (no
        refusal that needs Placement). Inside Nova, ``image_property_names``
        are the properties Nova keeps and ``host_guests`` the prefilter's.
        A filter that refuses its configuration raises ConfigError,
        enabled or not."""
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
        """What the filters would add to ``request_spec`` or why they would
        refuse it, leaving it as it was; beyond its own constraints, or
        (``keep_constraints`` False: a rebuild carries its first boot's)
        from none."""
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
        """Why a host cannot take a rebuild's new image, or None: what the
        filters would require and forbid against ``host_traits()`` (one
        read, only when they ask for something)."""
        outcome = self.outcome(None, request_spec, keep_constraints=False)
        if outcome.refusal is not None:
            return outcome.refusal
        # The filters constrain the root provider only.
        required = set(outcome.added.get('root_required', ()))
        forbidden = set(outcome.added.get('root_forbidden', ()))
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
