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

"""Request filter: the image-metadata prefilter, each property on its own.

``[image_metadata_prefilter] families``, each property read on its own
against ``image_type_common.image_metadata``; what it asks per family,
how it differs from Nova's own prefilter and when "No valid host" names an
architecture (``host_guests``): doc/source/admin/image-metadata.rst.
Volume-backed requests are read too (Nova puts the volume's image metadata
in ``request_spec.image``).
"""

import dataclasses
import logging

import os_traits

from image_type_common import exceptions as common_exceptions
from image_type_common import image_metadata
from image_type_common import text
from image_type_filter import exceptions
from image_type_filter.scheduler import spec_fields
from image_type_filter.scheduler import warn_once

LOG = logging.getLogger(__name__)
NOVAS_PREFILTER_BESIDE = (
    'Nova\'s own [scheduler] image_metadata_prefilter is on beside '
    '[image_metadata_prefilter] families: it adds none of an image\'s traits '
    'when one name is not in os-traits and sends i686 images only to '
    'HW_ARCH_I686 hosts; turn it off')


@dataclasses.dataclass(frozen=True)
class Need:
    """What one image property asks of the host."""

    family: image_metadata.Family
    prop: str
    value: str
    #: The traits that serve the value (a host with any of them boots it),
    #: its own first; () for none.
    serving_traits: tuple

    @property
    def _forbids(self):
        """Several traits boot the value (Nova's ``root_required`` has no
        any-of), or a host without any of the family's traits may boot it:
        then the family's other traits are forbidden instead."""
        return bool(self.serving_traits) and (
            len(self.serving_traits) > 1 or self.family.absent_means_unknown)

    @property
    def required(self):
        """The one trait a host must carry, or None."""
        if not self.serving_traits or self._forbids:
            return None
        return self.serving_traits[0]

    @property
    def forbidden(self):
        """The family's traits a host must not carry."""
        if not self._forbids:
            return frozenset()
        return frozenset(self.family.traits) - set(self.serving_traits)

    def __str__(self):
        return '%s=%s' % (self.prop, self.value)

    def describe(self):
        """For faults and --explain: the property and the family."""
        boots_on = (' (boots on %s%s)' % (
            ' or '.join(self.serving_traits), ' or a host with no %s* trait'
            % self.family.prefix if self.family.absent_means_unknown
            else '') if self._forbids else '')
        return 'for %s%s, image_metadata_prefilter family %s' % (
            self, boots_on, self.family.name)


class ImageMetadataPrefilter:
    """Require (or forbid) the traits the image's properties need.

    Off unless ``[image_metadata_prefilter] families`` names a family.
    """

    name = 'image_metadata_prefilter'

    def __init__(self, settings, catalog=None, placement=None,
                 host_guests=None):
        self.families = tuple(image_metadata.FAMILIES[name] for name in
                              settings.image_metadata_families)
        self.placement = placement
        #: ``host_guests(ctxt, uuids)`` -> {compute node uuid: the
        #: architectures Nova's record of it lists}, or None when it cannot
        #: tell (``nova.integration._host_guests``).
        self.host_guests = host_guests
        self.catalog = catalog
        self._warned = warn_once.WarnOnce()
        if self.families and settings.novas_metadata_prefilter:
            LOG.warning(NOVAS_PREFILTER_BESIDE)

    def needs(self, request_spec):
        """A Need per set image property of the enabled families (a dict
        or Nova's ImageMetaProps; a legacy name only when its current one
        is unset, as Nova's ImageMeta reads it)."""
        properties = spec_fields.image_properties(request_spec)
        found = []
        for family in self.families:
            for prop in family.properties:
                current = image_metadata.LEGACY_PROPERTIES.get(prop)
                if current and spec_fields.field(
                        properties, current) is not None:
                    continue
                raw = spec_fields.field(properties, prop)
                if raw is None:
                    continue
                value = image_metadata.canonical(prop, raw)
                serving = (family.serving_traits(value) if value is not None
                           else ())
                found.append(Need(family, prop, value if value is not None
                                  else text.safe_repr(raw), serving))
        return found

    def __call__(self, ctxt, request_spec):
        added = False
        for need in self.needs(request_spec):
            if need.required:
                added |= self._require(need, request_spec)
            elif need.serving_traits:
                if need.family.absent_means_unknown:
                    self._refuse_if_no_host_boots(ctxt, need)
                added |= self._forbid(need, request_spec)
            else:
                self._warn(need, 'has no os-traits trait')
        return added

    def _known(self, traits):
        return set(traits) if self.catalog is None else \
            self.catalog.known(traits)

    def _require(self, need, request_spec):
        trait = need.required
        if not self._known({trait}):
            self._warn(need, 'needs %s, which Placement does not know' % trait)
            return False
        if self.catalog is not None and self.catalog.carried(trait) is False:
            raise exceptions.NoValidHost(
                'No compute host reports %s, which the image needs %s.'
                % (trait, need.describe()))
        if trait in request_spec.root_required:
            return False
        request_spec.root_required.add(trait)
        return True

    def _forbid(self, need, request_spec):
        forbidden = self._known(need.forbidden) - set(
            request_spec.root_forbidden)
        for trait in sorted(forbidden):
            request_spec.root_forbidden.add(trait)
        return bool(forbidden)

    def _refuse_if_no_host_boots(self, ctxt, need):
        """Name an architecture no host runs, as
        doc/source/admin/image-metadata.rst describes. Asks nothing when a
        serving trait has been seen carried (the common path: i686 on
        x86_64 hosts) and nothing more when Placement or Nova cannot
        tell."""
        serving = set(need.serving_traits)
        if self.catalog is None or serving & self.catalog.carried_traits() \
                or self.catalog.uncarried(serving) != serving:
            return
        family = need.family
        without = self._hosts_without(family)
        if without is None:
            return
        # Short: Nova's fault keeps 255 characters, its own prefix first.
        refusal = ('No compute host reports %s, which the image needs for '
                   '%s, image_metadata_prefilter family %s' % (
                       ' or '.join(need.serving_traits), need, family.name))
        if not without:
            raise exceptions.NoValidHost(
                '%s; each one reports another %s* trait.'
                % (refusal, family.prefix))
        guests = (self.host_guests(ctxt, sorted(without))
                  if self.host_guests is not None else None)
        if guests is None or any(need.value in archs
                                 for archs in guests.values()):
            return
        runs = sorted(set().union(*guests.values()))
        raise exceptions.NoValidHost(
            '%s; the %d host(s) with no %s* trait run %s.' % (
                refusal, len(without), family.prefix,
                'only %s guests' % ', '.join(runs) if runs
                else 'no guest Nova knows of'))

    def _hosts_without(self, family):
        """The uuids of the compute nodes carrying none of ``family``'s
        traits (one Placement query), or None when Placement cannot say."""
        if self.placement is None:
            return None
        traits = self._known(family.traits)
        try:
            found = self.placement.list_resource_providers(
                required=','.join([os_traits.COMPUTE_NODE] + [
                    '!' + t for t in sorted(traits)]))
        except common_exceptions.Error as exc:
            LOG.warning('cannot tell which compute hosts report no %s* '
                        'trait (%s): "No valid host" will not name one',
                        family.prefix, exc)
            return None
        return {rp['uuid'] for rp in found}

    def _warn(self, need, why):
        if self._warned.first_time((need.prop, need.value[:64])):
            LOG.warning('image property %s %s: no host is filtered by it '
                        '(image_metadata_prefilter family %s)', need, why,
                        need.family.name)

    def describe_trait(self, trait, request_spec=None):
        """Which of the request's properties asks for or forbids ``trait``."""
        family = image_metadata.family_of_trait(trait)
        if family not in self.families:
            return None
        if request_spec is not None:
            for need in self.needs(request_spec):
                if trait == need.required or trait in need.forbidden:
                    return need.describe()
        return 'image_metadata_prefilter family %s' % family.name
