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

"""The image-format catalogue: os-traits' COMPUTE_IMAGE_TYPE_* list, both ways.

Read from os-traits at import, so no format name is retyped and a newer
os-traits brings new formats with no change here.
"""

import os_traits

PREFIX = 'COMPUTE_IMAGE_TYPE_'

TRAITS = tuple(sorted(os_traits.get_traits(prefix=PREFIX)))

#: Format name (lower case, as Glance spells ``disk_format``) -> trait.
TRAIT_BY_FORMAT = {t[len(PREFIX):].lower(): t for t in TRAITS}

FORMAT_BY_TRAIT = {t: f for f, t in TRAIT_BY_FORMAT.items()}

FORMATS = tuple(sorted(TRAIT_BY_FORMAT))

#: Carried by a compute node that boots no image on purpose (volume-backed
#: servers only), so that ``image-type-filter status`` passes it: the
#: reporter keeps it from ``[virt_capabilities] volume_only``. Not an
#: image-type trait: nothing requires it, nothing forbids it.
VOLUME_ONLY_TRAIT = 'CUSTOM_IMAGE_TYPE_FILTER_VOLUME_ONLY'


def trait_for_format(disk_format):
    """The trait of a known disk format (case-insensitively), else None:
    always one of TRAITS or None, safe in a URL."""
    if not isinstance(disk_format, str):
        return None
    return TRAIT_BY_FORMAT.get(disk_format.lower())


def is_image_type_trait(trait):
    """True for a ``COMPUTE_IMAGE_TYPE_*`` trait, known to os-traits or
    not. Whose it is (nova-compute's by default, or the reporter's) is
    ``[virt_capabilities] image_type_traits_owner``'s to say."""
    return trait.startswith(PREFIX)
