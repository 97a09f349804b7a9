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

"""ImageTypeRebuildFilter; what it refuses and why is
doc/source/install/scheduler.rst's.

Nova loads a host filter only if it subclasses Nova's ``BaseHostFilter``,
so this module imports Nova; ``all_filters`` imports it only once
``compat.resolve`` has found every name it uses.
"""

from nova import exception
from nova.scheduler import filters
from nova.scheduler import utils

from image_type_filter.nova import integration


class ImageTypeRebuildFilter(filters.BaseHostFilter):
    """Refuses a host that cannot take a rebuild's new image (the check
    Nova skips on a rebuild); on every other request, checks that Nova ran
    the request filters (``integration.request_check``)."""

    RUN_ON_REBUILD = True

    def host_passes(self, host_state, spec_obj):
        if utils.request_is_rebuild(spec_obj):
            return integration.rebuild_refusal(host_state.uuid,
                                               spec_obj) is None
        return integration.request_check(spec_obj)

    def filter_all(self, filter_obj_list, spec_obj):
        """The hosts that pass. A rebuild none of whose hosts passes
        raises Nova's NoValidHost with the reason, for the server's fault.

        Nova's host-filter interface says nothing of exceptions, but the
        call that runs it, ``SchedulerManager.select_destinations`` (Nova
        31 to 34), declares NoValidHost its expected exception and raises
        it itself a step later when no host is left (reason "There are not
        enough hosts available."), and conductor's rebuild records it as
        the fault: this is what Nova would do, with the reason.
        """
        if not utils.request_is_rebuild(spec_obj):
            return (host for host in filter_obj_list
                    if self.host_passes(host, spec_obj))
        passed, reasons = [], []
        for host_state in filter_obj_list:
            reason = integration.rebuild_refusal(host_state.uuid, spec_obj)
            if reason is None:
                passed.append(host_state)
            elif reason not in reasons:
                reasons.append(reason)
        no_valid_host = getattr(exception, 'NoValidHost', None)
        if not passed and reasons and no_valid_host is not None:
            raise no_valid_host(reason=' '.join(reasons))
        return passed
