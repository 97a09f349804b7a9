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

"""Run the request filters, ask Placement, return the candidates.

The microversion is negotiated once per PlacementClient. Placement errors
arrive as this project's exceptions; a 400 "No such trait" says Placement is
older than os-traits and names the trait.
"""

import dataclasses
import logging
import time

from image_type_common import exceptions
from image_type_common import placement_client as pc
from image_type_filter import exceptions as filter_exceptions
from image_type_filter.client import fleet_shape
from image_type_filter.client import query
from image_type_filter.conf import scheduler_client as client_conf
from image_type_filter.scheduler import pipeline as filter_pipeline

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class Candidates:
    """What Placement offered: hosts (root provider uuids), and how asked."""

    provider_uuids: list
    query: str
    filters_applied: list


def root_providers(body):
    """Root provider uuids of every allocation request, sorted."""
    summaries = body.get('provider_summaries', {})
    roots = set()
    for request in body.get('allocation_requests', []):
        for uuid in request.get('allocations', {}):
            roots.add(summaries.get(uuid, {}).get('root_provider_uuid', uuid))
    return sorted(roots)


class SchedulerClient:
    """``settings``: a ClientSettings (``settings.ClientSettings``)."""

    def __init__(self, placement, settings, pipeline=None,
                 clock=time.monotonic):
        self.placement = placement
        self.settings = settings
        self.pipeline = pipeline or filter_pipeline.RequestFilterPipeline.\
            from_settings(settings.filters, placement=placement)
        self._clock = clock
        self._flat = None
        self._flat_checked = None
        self._warned = False

    def trait_parameter(self):
        """``root_required`` or ``required``, per the option (and check)."""
        choice = self.settings.trait_parameter
        if choice == client_conf.ROOT_REQUIRED:
            version = self.placement.negotiate()
            if not query.uses_root_required(version) and not self._warned:
                self._warned = True
                LOG.warning('Placement microversion %s has no root_required '
                            '(1.35): requiring root traits through the '
                            'unsuffixed required parameter instead',
                            pc.version_str(version))
            return choice
        if choice != client_conf.AUTO:
            return choice
        now = self._clock()
        interval = self.settings.flat_check_interval
        if self._flat_checked is None or now - self._flat_checked >= interval:
            self._flat = fleet_shape.is_flat(self.placement)
            self._flat_checked = now
            LOG.debug('fleet is %s: image-type trait goes in %s',
                      'flat' if self._flat else 'not flat',
                      'required' if self._flat else 'root_required')
        return client_conf.REQUIRED if self._flat else \
            client_conf.ROOT_REQUIRED

    def build_query(self, request_spec, ctxt=None):
        applied = self.pipeline(ctxt, request_spec)
        return query.build(request_spec, self.placement.negotiate(),
                           self.trait_parameter()), applied

    def get_candidates(self, request_spec, ctxt=None):
        """Filters, then ``GET /allocation_candidates``. Mutates the spec."""
        query_string, applied = self.build_query(request_spec, ctxt)
        try:
            body = self.placement.get_allocation_candidates(query_string)
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
