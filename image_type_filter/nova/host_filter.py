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
