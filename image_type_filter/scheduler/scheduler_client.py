"""Run the request filters, ask Placement, return the candidates.

The microversion is discovered once per PlacementClient. Placement errors
arrive as this project's exceptions; a 400 "No such trait" says Placement is
older than os-traits and names the trait.
"""

import dataclasses
import logging
import time

from image_type_common import exceptions as vc_exceptions
from image_type_common import placement_client as pc
from image_type_filter.conf import scheduler as scheduler_conf
from image_type_filter.scheduler import fleet_shape
from image_type_filter.scheduler import query
from image_type_filter.scheduler import request_filter

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
    def __init__(self, client, conf, pipeline=None, clock=time.monotonic):
        self.client = client
        self.conf = conf
        self.pipeline = pipeline or request_filter.RequestFilterPipeline.\
            from_conf(conf, placement=client)
        self._clock = clock
        self._image_filter = request_filter.RequireImageTypeSupport(conf)
        self._flat = None
        self._flat_checked = None
        self._warned = False

    def trait_parameter(self):
        """``root_required`` or ``required``, per the option (and check)."""
        choice = self.conf.scheduler.image_type_trait_parameter
        if choice == scheduler_conf.ROOT_REQUIRED:
            version = self.client.microversion
            if not query.uses_root_required(version) and not self._warned:
                self._warned = True
                LOG.warning('Placement microversion %s has no root_required '
                            '(1.35): requiring root traits through the '
                            'unsuffixed required parameter instead',
                            pc.version_str(version))
            return choice
        if choice != scheduler_conf.AUTO:
            return choice
        now = self._clock()
        interval = self.conf.scheduler.image_type_flat_check_interval
        if self._flat_checked is None or now - self._flat_checked >= interval:
            self._flat = fleet_shape.is_flat(self.client)
            self._flat_checked = now
            LOG.debug('fleet is %s: image-type trait goes in %s',
                      'flat' if self._flat else 'not flat',
                      'required' if self._flat else 'root_required')
        return scheduler_conf.REQUIRED if self._flat else \
            scheduler_conf.ROOT_REQUIRED

    def build_query(self, request_spec, ctxt=None):
        applied = self.pipeline(ctxt, request_spec)
        return query.build(request_spec, self.client.microversion,
                           self.trait_parameter()), applied

    def get_candidates(self, request_spec, ctxt=None):
        """Filters, then ``GET /allocation_candidates``. Mutates the spec."""
        query_string, applied = self.build_query(request_spec, ctxt)
        try:
            body = self.client.get_allocation_candidates(query_string)
        except vc_exceptions.UnknownTraits as exc:
            raise vc_exceptions.UnknownTraits(exc.traits, (
                'Placement is older than the installed os-traits: it lacks '
                'trait(s) %s; upgrade Placement or turn the filter off'
                % ', '.join(sorted(exc.traits)))) from exc
        return Candidates(root_providers(body), query_string, applied)

    def host_supports_image(self, provider_uuid, request_spec):
        """Can this one host boot the request's image? (rebuild on a host)

        Nova's scheduler lets a rebuild with a new image through unchecked;
        this answers it with one read of the host's traits. Volume-backed
        requests and requests without an image are always supported; an
        unknown format follows ``image_type_unknown_format``.
        """
        trait = self._image_filter.required_trait(request_spec)
        if trait is None:
            return True
        traits, _ = self.client.get_provider_traits(provider_uuid)
        return trait in traits
