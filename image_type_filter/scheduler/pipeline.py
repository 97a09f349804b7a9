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

"""The request filters nova-scheduler (and this project's client) runs, in
order, as one Nova-shaped ``(ctxt, request_spec)`` callable.

A filter returns True when it added a constraint to the request and raises
``image_type_filter.exceptions.NoValidHost`` when the request cannot be
placed. The three filters are this project's own and always built, in a
fixed order (the image type first, so its refusal names the format); each
honours its own on/off option. There is no plug-in point: a third-party
filter belongs in Nova's own list.
"""

import logging
import time

from image_type_filter.scheduler import hardware_properties
from image_type_filter.scheduler import image_type_support
from image_type_filter.scheduler import isolation
from image_type_filter.scheduler import trait_catalog

LOG = logging.getLogger(__name__)

#: Every request filter, in the order they run.
FILTERS = (image_type_support.RequireImageTypeSupport,
           isolation.IsolateImageProperties,
           hardware_properties.RequireImageMetadataSupport)


def _constraints(spec):
    return {name: set(getattr(spec, name, ()) or ())
            for name in ('root_required', 'root_forbidden', 'required',
                         'forbidden')}


class RequestFilterPipeline:
    """Runs the request filters in order."""

    def __init__(self, filters):
        self.filters = list(filters)

    @classmethod
    def from_settings(cls, settings, placement=None,
                      image_property_names=None):
        """Every filter, built from ``settings`` (a FilterSettings).

        ``placement``: a PlacementClient, or None (no refusal that needs to
        ask Placement); ``image_property_names``: inside Nova, the image
        properties Nova keeps. A filter that refuses its configuration stops
        the load with its own ConfigError, whether it is enabled or not.
        """
        # One catalogue for every filter: one read, not one each.
        catalog = trait_catalog.for_placement(placement, settings)
        return cls((f.name, f(settings, placement=placement, catalog=catalog,
                              image_property_names=image_property_names))
                   for f in FILTERS)

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
