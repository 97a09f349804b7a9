"""ImageTypeRebuildFilter: the check Nova skips on a rebuild.

nova-scheduler runs no request filter on a rebuild with a new image, and
only host filters with ``RUN_ON_REBUILD``. This one lets every other request
through untouched (Placement has already filtered them) and, on a rebuild,
refuses the server's host if it cannot boot the new image or the image
breaks an isolation rule: one read of that host's traits.
"""

from nova.scheduler import filters
from nova.scheduler import utils as scheduler_utils

from image_type_filter.nova import integration


class ImageTypeRebuildFilter(filters.BaseHostFilter):
    RUN_ON_REBUILD = True

    def host_passes(self, host_state, spec_obj):
        if not scheduler_utils.request_is_rebuild(spec_obj):
            return True
        return integration.rebuild_check(host_state.uuid, spec_obj)
