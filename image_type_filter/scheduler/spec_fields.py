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

"""Read a request the same way whether it is this project's or Nova's.

Nova's objects raise on a name they lack and on a field not set; both are
normal here (no image; the legacy ``architecture``), and ``field`` answers
None. A field Nova no longer declares is ``nova.compat``'s to catch at
start-up.
"""

import collections.abc


def field(container, name):
    """``name`` of a dict or an object (Nova's included, ImageMetaProps
    too), or None when it is not set or Nova's object has no such field."""
    if container is None:
        return None
    if isinstance(container, collections.abc.Mapping):
        return container.get(name)
    fields = getattr(type(container), 'fields', None)
    if isinstance(fields, collections.abc.Mapping) and (
            name not in fields or not container.obj_attr_is_set(name)):
        return None  # an oslo versioned object: declared, and set
    return getattr(container, name, None)


def image_properties(request_spec):
    """The image's properties: a dict, Nova's ImageMetaProps, or None."""
    return field(field(request_spec, 'image'), 'properties')


def extra_specs(request_spec):
    """The flavor's extra specs (a dict), or None."""
    return field(field(request_spec, 'flavor'), 'extra_specs')
