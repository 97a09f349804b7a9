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

"""The owner rule, and what a provider's traits become after a sync.

``OwnerRule`` is which traits this reporter keeps and which it may remove,
decided once from the configuration (``NodePlan.rule``) and handed whole to
the reporter. ``OwnerRule.on_provider`` applies it to one provider, given
what the state remembers there, as an ``Ownership``: the traits to keep, and
the ones it owns (whose absence it may bring about). Pure: no HTTP, no file,
so every rule is unit-testable without a server.
"""

import dataclasses

from image_type_common import image_types
from image_type_common import trait_names
from virt_capabilities import metadata_traits


def _ownable(trait):
    """A trait this project may ever own on a provider: an image-type
    trait, a custom trait, or one of the image-metadata table's. Nothing
    else (``COMPUTE_STATUS_DISABLED``, ``COMPUTE_NODE``, nova-compute's
    capabilities) whatever the caller hands over."""
    return (image_types.is_image_type_trait(trait)
            or trait_names.is_custom(trait)
            or trait in metadata_traits.ALL_TRAITS)


@dataclasses.dataclass(frozen=True)
class Ownership:
    """On one provider (or several, ``combined``): the traits to keep
    (``desired``) and the traits owned, whose absence a sync may bring
    about: ``owned``, and with ``image_type_namespace`` every
    ``COMPUTE_IMAGE_TYPE_*`` trait. Every other trait belongs to someone
    else (``_ownable``)."""

    desired: frozenset
    owned: frozenset = frozenset()
    image_type_namespace: bool = False

    def __post_init__(self):
        object.__setattr__(self, 'owned', frozenset(
            t for t in self.owned if _ownable(t)))
        foreign = sorted(t for t in self.desired if not self.owns(t))
        if foreign:
            raise ValueError('desired traits outside the owned namespace: %s'
                             % ', '.join(foreign))

    def owns(self, trait):
        return ((self.image_type_namespace
                 and image_types.is_image_type_trait(trait))
                or trait in self.owned)

    def target(self, current):
        """``current`` with the owned traits set to ``desired``."""
        return {t for t in current if not self.owns(t)} | set(self.desired)

    def in_sync_filter(self, absent=frozenset()):
        """``required`` tokens matching exactly the providers already in sync.

        All desired traits, and ``!trait`` for every owned trait not desired;
        ``absent`` traits (which Placement does not know) are left out.
        """
        owned = set(image_types.TRAITS if self.image_type_namespace
                    else ()) | self.owned
        desired = self.desired - set(absent)
        forbidden = owned - self.desired - set(absent)
        return sorted(desired) + ['!' + t for t in sorted(forbidden)]


def combined(ownerships):
    """One Ownership owning what any of ``ownerships`` owns (they share
    ``desired``): for the query that finds many providers in sync."""
    ownerships = list(ownerships)
    return Ownership(
        desired=ownerships[0].desired,
        owned=frozenset().union(*(o.owned for o in ownerships)),
        image_type_namespace=ownerships[0].image_type_namespace)


@dataclasses.dataclass(frozen=True)
class OwnerRule:
    """Which traits this reporter keeps, and which it may remove:

    * ``image_types``: the image-type traits it keeps, with
      ``owns_image_types`` (``image_type_traits_owner = reporter``), when
      it owns the whole ``COMPUTE_IMAGE_TYPE_*`` namespace; by default
      nova-compute does, and the reporter never touches one;
    * ``custom``: the custom traits it keeps (``custom_traits``, and the
      volume-only marker);
    * ``metadata``: the image-metadata traits it keeps; of its driver's
      (``metadata_ownable``) it also owns those it remembers setting.

    It owns a custom or image-metadata trait it keeps, or that it remembers
    setting on that provider and that no other reporter's record holds
    while this one no longer keeps it. Nothing else, ever.
    """

    image_types: frozenset = frozenset()
    owns_image_types: bool = False
    custom: frozenset = frozenset()
    metadata: frozenset = frozenset()
    metadata_ownable: frozenset = frozenset()

    def __post_init__(self):
        if self.image_types and not self.owns_image_types:
            raise ValueError('image-type traits kept without owning them')
        if not all(image_types.is_image_type_trait(t)
                   for t in self.image_types):
            raise ValueError('not image-type traits: %s'
                             % ', '.join(sorted(self.image_types)))
        if not all(trait_names.is_custom(t) for t in self.custom):
            raise ValueError('not custom traits: %s'
                             % ', '.join(sorted(self.custom)))
        object.__setattr__(self, 'metadata_ownable', frozenset(
            self.metadata_ownable | self.metadata)
            & metadata_traits.ALL_TRAITS)
        if self.metadata - self.metadata_ownable:
            raise ValueError('not image-metadata traits: %s' % ', '.join(
                sorted(self.metadata - self.metadata_ownable)))

    @property
    def desired(self):
        """Every trait it keeps."""
        return self.image_types | self.custom | self.metadata

    @property
    def records_anything(self):
        """Whether a sync may set something the state must remember."""
        return bool(self.custom or self.metadata)

    def remembered(self, record):
        """Of a state record, what this reporter may have set: custom
        traits and its driver's image-metadata traits; never another
        standard trait, whatever the file says."""
        return frozenset(t for t in record if trait_names.is_custom(t)
                         or t in self.metadata_ownable)

    def on_provider(self, record=frozenset(), others=frozenset(),
                    missing=frozenset()):
        """The Ownership on one provider: ``record`` is what the state
        remembers this reporter setting there, ``others`` what other
        reporters' records of it hold, ``missing`` the standard traits
        Placement does not know (kept, once it does)."""
        previous = self.remembered(record) - (set(others) - self.desired)
        return Ownership(
            desired=self.desired - set(missing),
            owned=self.custom | self.metadata | previous,
            image_type_namespace=self.owns_image_types)

    def to_record(self, record=frozenset(), added=(), missing=frozenset()):
        """What the state remembers this reporter set on a provider after
        a sync: its custom traits (those Placement has), and of the
        image-metadata traits it keeps only those it added, now or
        before. One somebody else had set first is never its to remove."""
        metadata = self.metadata & (set(added) | self.remembered(record))
        return (self.custom | metadata) - set(missing)

    def removal(self, record=frozenset(), others=frozenset()):
        """The Ownership ``remove`` applies on one provider: nothing kept;
        owned, what it remembers setting there that no other reporter's
        record holds, and, owning the image types, those it keeps."""
        return Ownership(
            desired=frozenset(),
            owned=(self.remembered(record) - set(others)) | self.image_types)


def diff(current, target):
    """(added, removed) between two trait sets, each sorted."""
    current, target = set(current), set(target)
    return sorted(target - current), sorted(current - target)
