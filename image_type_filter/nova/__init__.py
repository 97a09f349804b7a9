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

"""Running inside an unmodified nova-scheduler, configured from nova.conf.

Nova calls a function named in ``[filter_scheduler] available_filters``
for host-filter classes; naming ``image_type_filter.nova.all_filters``
there is the whole installation: our options on Nova's CONF, our request
filters after Nova's, and ``ImageTypeRebuildFilter``. Every Nova name used
is ``compat``'s.
"""

from image_type_filter.nova import compat
from image_type_filter.nova import integration


def all_filters():
    """For ``[filter_scheduler] available_filters`` (see the module doc)."""
    nova = integration.install()
    if nova.lacks(compat.HOST_FILTER):
        return []
    from image_type_filter.nova import host_filter

    return [host_filter.ImageTypeRebuildFilter]
