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

Nova imports host-filter classes from every name in ``[filter_scheduler]
available_filters``; a name that is a function is called and must return
classes. Naming ``image_type_filter.nova.all_filters`` there is the whole
installation: it registers this project's options on Nova's CONF, adds its
request filters to the ones nova-scheduler runs before every allocation-
candidate query, and returns ``ImageTypeRebuildFilter``, a host filter that
checks a rebuild's new image (Nova runs no request filter on a rebuild) and
that Nova really ran the request filters on every other request.
Every Nova name used is ``compat``'s.
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
