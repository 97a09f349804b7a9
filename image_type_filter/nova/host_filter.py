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

"""ImageTypeRebuildFilter: the check Nova skips on a rebuild, and the
check that Nova ran the request filters.

nova-scheduler runs no request filter on a rebuild with a new image, and
only host filters with ``RUN_ON_REBUILD``. On a rebuild this one refuses
the server's host if it cannot boot the new image or the image breaks an
isolation rule: one read of that host's traits. On every other request it
checks, without a Placement read, that nova-scheduler really ran this
project's request filters on it (``integration.request_check``).

The class is built at start-up on the ``BaseHostFilter`` ``compat`` found:
this module imports nothing of Nova, so a Nova that moved it gets a log
line, not a traceback.
"""

import functools

from image_type_filter.nova import integration

NAME = 'ImageTypeRebuildFilter'


@functools.lru_cache(maxsize=None)
def build(base_host_filter, request_is_rebuild):
    """The host-filter class, on Nova's base class (one per base)."""

    def host_passes(self, host_state, spec_obj):
        if request_is_rebuild(spec_obj):
            return integration.rebuild_check(host_state.uuid, spec_obj)
        return integration.request_check(spec_obj)

    return type(NAME, (base_host_filter,), {
        '__doc__': __doc__, '__module__': __name__, 'RUN_ON_REBUILD': True,
        'host_passes': host_passes})
