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

"""Nova's two spellings of a trait request, read in one place.

- **Flavor extra specs** (``nova/scheduler/utils.py``,
  ``ResourceRequest.XS_KEYPAT`` and ``RequestGroup.add_trait``):
  ``trait[SUFFIX]:NAME`` valued ``required`` or ``forbidden``, the suffix
  naming a granular group; any other value is ignored.
- **Image properties** (``nova/objects/image_meta.py``,
  ``ImageMetaProps._set_attr_from_trait_names``): only ``trait:NAME``
  valued exactly ``required``, kept in ``traits_required``; no suffix (an
  image property Nova drops) and no ``forbidden`` (asks for nothing).

Names come back as written; checking them against Placement's grammar is
the caller's. Nothing raises. tests/nova compares every answer with Nova's.
"""

import collections
import collections.abc
import re

from image_type_filter.scheduler import spec_fields

#: ResourceRequest.XS_KEYPAT, literally.
FLAVOR_KEY = re.compile(r"^(resources|trait)([a-zA-Z0-9_-]{1,64})?:(.*)$")
TRAIT = 'trait'
REQUIRED, FORBIDDEN = 'required', 'forbidden'
#: RequestGroup.add_trait's values; any other is ignored.
TRAIT_VALUES = (REQUIRED, FORBIDDEN)
#: The image property prefix ImageMetaProps reads (no suffix).
IMAGE_PREFIX = 'trait:'
#: The ImageMetaProps field Nova fills from ``trait:NAME=required``.
IMAGE_FIELD = 'traits_required'
#: One ``trait[S]:X`` extra spec Nova honours, as Nova splits it: ``group``
#: is the suffix (None for the unsuffixed group).
FlavorTrait = collections.namedtuple('FlavorTrait', 'group name value')


def flavor_traits(extra_specs):
    """The trait entries Nova honours: value ``required`` or
    ``forbidden``, any group, in the flavor's order."""
    if not isinstance(extra_specs, collections.abc.Mapping):
        return []
    found = []
    for key, value in list(extra_specs.items()):
        match = FLAVOR_KEY.match(key) if isinstance(key, str) else None
        if match and match.group(1) == TRAIT and value in TRAIT_VALUES:
            found.append(FlavorTrait(match.group(2), match.group(3), value))
    return found


def flavor_required_traits(extra_specs):
    """The traits the flavor requires, in any group."""
    return {e.name for e in flavor_traits(extra_specs)
            if e.value == REQUIRED}


def image_required_traits(properties):
    """The traits an image's properties require: ``trait:NAME=required``
    in a dict (Glance's properties), or the ``traits_required`` Nova's
    ImageMetaProps already holds. A set of names."""
    if not isinstance(properties, collections.abc.Mapping):
        # ImageMetaProps (or an object shaped like it): Nova parsed it.
        found = spec_fields.field(properties, IMAGE_FIELD) or ()
        if isinstance(found, (str, bytes)) or not isinstance(
                found, collections.abc.Iterable):
            return set()
        return {str(t) for t in found}
    return {str(key)[len(IMAGE_PREFIX):]
            for key, value in list(properties.items())
            if str(key).startswith(IMAGE_PREFIX) and str(value) == REQUIRED}


def image_ignored_traits(properties):
    """``(key, why)`` for each image property that looks like a trait
    request but asks Nova for nothing."""
    if not isinstance(properties, collections.abc.Mapping):
        return []
    found = []
    for key, value in list(properties.items()):
        key = str(key)
        if key.startswith(IMAGE_PREFIX):
            if str(value) != REQUIRED:
                found.append((key, 'Nova ignores it, asking for the trait '
                                   'only when the value is exactly %r'
                                   % REQUIRED))
        elif key == IMAGE_FIELD:
            found.append((key, 'Nova ignores it, filling %s from '
                               'trait:X=required only' % IMAGE_FIELD))
        else:
            match = FLAVOR_KEY.match(key)
            if match and match.group(1) == TRAIT:
                found.append((key, 'Nova drops it: granular trait groups '
                                   '(trait<suffix>:) are a flavor extra '
                                   'spec, an image takes only trait:'))
    return found
