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

Nova's objects raise on a name they do not have and on a field that is not
set. A field that is not set is normal (no image, no flavor extra specs):
``field`` answers None. A name Nova's object does not have at all means Nova
renamed or dropped a field the filters rely on: filtering by it would stop
in silence, so ``field`` logs an ERROR naming the object and the field,
once, and answers None. ``NOVA_FIELDS`` lists every such name;
tests/nova checks each against Nova's own objects.

Image properties are different: Nova's ImageMetaProps simply has no field
for a property Nova drops, and the filters ask for names it may lack (the
legacy ``architecture``, an isolation rule's key outside Nova), so
``image_property`` answers None for those without a word.
"""

import collections.abc
import logging

from image_type_filter.scheduler import warn_once

LOG = logging.getLogger(__name__)

#: Nova object -> the fields the filters and the rebuild check read.
NOVA_FIELDS = {
    'RequestSpec': ('image', 'flavor', 'is_bfv', 'instance_uuid'),
    'ImageMeta': ('id', 'disk_format', 'properties'),
    'Flavor': ('extra_specs',),
    'ImageMetaProps': ('traits_required',),
}

#: (object type, field) pairs already logged; shared by every request.
_reported = warn_once.WarnOnce()


def _nova_fields(container):
    """The object's declared fields when it is one of Nova's (an oslo
    versioned object), else None."""
    fields = getattr(type(container), 'fields', None)
    return fields if isinstance(fields, collections.abc.Mapping) else None


def field(container, name):
    """``name`` of a dict or an object (Nova's included), or None when it
    is not set. A Nova object without such a field is an ERROR, logged
    once per object type and name."""
    if container is None:
        return None
    if isinstance(container, collections.abc.Mapping):
        return container.get(name)
    fields = _nova_fields(container)
    if fields is not None:
        if name not in fields:
            key = (type(container).__name__, name)
            if _reported.first_time(key):
                LOG.error('Nova\'s %s has no field %s: image-type-filter '
                          'cannot read it, so it filters nothing by it; '
                          'is this Nova release supported?', *key)
            return None
        if not container.obj_attr_is_set(name):
            return None
    return getattr(container, name, None)


def image_property(properties, name):
    """An image property from a dict or Nova's ImageMetaProps, or None
    when it is not set or Nova has no such property."""
    if properties is None:
        return None
    if isinstance(properties, collections.abc.Mapping):
        return properties.get(name)
    fields = _nova_fields(properties)
    if fields is not None and (name not in fields or
                               not properties.obj_attr_is_set(name)):
        return None
    return getattr(properties, name, None)


def image_properties(request_spec):
    """The image's properties: a dict, Nova's ImageMetaProps, or None."""
    return field(field(request_spec, 'image'), 'properties')


def extra_specs(request_spec):
    """The flavor's extra specs (a dict), or None."""
    return field(field(request_spec, 'flavor'), 'extra_specs')
