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
check that Nova ran the request filters (``integration.request_check``).
What it refuses and why it raises Nova's ``NoValidHost`` for a rebuild is
doc/source/install/scheduler.rst's. The class is built at start-up on the
``BaseHostFilter`` ``compat`` found.
"""

import functools

from image_type_filter.nova import integration


@functools.lru_cache(maxsize=None)
def build(base_host_filter, request_is_rebuild, no_valid_host=None):
    """The host-filter class, on Nova's base class (one per base).

    ``no_valid_host`` is Nova's ``NoValidHost``: without it a refused
    rebuild's fault names no reason (the WARNING line still does)."""

    def host_passes(self, host_state, spec_obj):
        if request_is_rebuild(spec_obj):
            return integration.rebuild_refusal(host_state.uuid,
                                               spec_obj) is None
        return integration.request_check(spec_obj)

    def filter_all(self, filter_obj_list, spec_obj):
        """Nova's call for each filter: the hosts that pass. A rebuild
        none of whose hosts passes ends in NoValidHost with the reason."""
        if not request_is_rebuild(spec_obj):
            return (host for host in filter_obj_list
                    if host_passes(self, host, spec_obj))
        passed, reasons = [], []
        for host_state in filter_obj_list:
            reason = integration.rebuild_refusal(host_state.uuid, spec_obj)
            if reason is None:
                passed.append(host_state)
            elif reason not in reasons:
                reasons.append(reason)
        if not passed and reasons and no_valid_host is not None:
            raise no_valid_host(reason=' '.join(reasons))
        return passed

    return type(integration.HOST_FILTER, (base_host_filter,), {
        '__doc__': __doc__, '__module__': __name__, 'RUN_ON_REBUILD': True,
        'host_passes': host_passes, 'filter_all': filter_all})
