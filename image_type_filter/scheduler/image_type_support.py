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

"""Request filter: the image's ``disk_format`` as a COMPUTE_IMAGE_TYPE_* trait.

Off unless ``[scheduler] filter_hosts_by_image_type_support`` (or Nova's
``query_placement_for_image_type_support``) is on. Volume-backed requests
(the image is not the root disk) and requests without an image are not
filtered.
"""

import logging

from image_type_common import image_types
from image_type_common import text
from image_type_filter import exceptions
from image_type_filter.scheduler import spec_fields
from image_type_filter.scheduler import warn_once

LOG = logging.getLogger(__name__)


class RequireImageTypeSupport:
    """Require the trait of the image's ``disk_format`` on the root
    provider: from the catalogue, never the string, so one known trait or
    none."""

    name = 'require_image_type_support'

    def __init__(self, settings, catalog=None):
        self.settings = settings
        self._unknown = warn_once.WarnOnce()
        self.catalog = catalog

    def __call__(self, ctxt, request_spec):
        if not self.settings.image_type_enabled:
            return False
        trait = self.required_trait(request_spec)
        if trait is None:
            return False
        self._fail_if_no_host_boots(trait)
        if trait in request_spec.root_required:
            return False  # Nova's own filter added it
        request_spec.root_required.add(trait)
        return True

    def _fail_if_no_host_boots(self, trait):
        """NoValidHost naming the format when no compute host carries its
        trait: no request while some host is known to, one before a
        refusal (``trait_catalog``)."""
        if self.catalog is None or self.catalog.carried(trait) is not False:
            return
        carried = self.catalog.carried_traits()
        boots = sorted(image_types.FORMAT_BY_TRAIT[t] for t in carried
                       if t in image_types.FORMAT_BY_TRAIT)
        raise exceptions.NoValidHost(
            'No compute host boots %s images (%s); this cloud boots %s.'
            % (image_types.FORMAT_BY_TRAIT[trait], trait,
               ', '.join(boots) or 'no image format at all'))

    def required_trait(self, request_spec):
        """The trait a host needs to boot the request's image, or None
        (volume-backed, no image, an unknown format under ``ignore``; under
        ``reject`` that is NoValidHost)."""
        if spec_fields.field(request_spec, 'is_bfv'):
            return None
        image = spec_fields.field(request_spec, 'image')
        if image is None:
            return None
        disk_format = spec_fields.field(image, 'disk_format')
        trait = image_types.trait_for_format(disk_format)
        if trait is None:
            self._unknown_format(disk_format)
        return trait

    def _unknown_format(self, disk_format):
        if self.settings.rejects_unknown_format:
            raise exceptions.NoValidHost(
                'image disk_format %s is not a known image type; known: %s'
                % (text.safe_repr(disk_format),
                   ', '.join(image_types.FORMATS)))
        key = disk_format if isinstance(disk_format, str) else repr(
            disk_format)
        if self._unknown.first_time(key[:64]):
            LOG.warning('image disk_format %s maps to no known '
                        'COMPUTE_IMAGE_TYPE_* trait; not filtering hosts by '
                        'image type (is os-traits up to date?)',
                        text.safe_repr(disk_format))
