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

"""Which traits the reporter owns on a provider, and what it remembers
setting there.

The rules are ``RULES``, each held by a test named after it
(tests/unit/virt_capabilities/test_ownership.py); each place that keeps one
names it: here, in the reporter (``virt_capabilities.reporter``), and in
the state file's reads and writes (``virt_capabilities.ownership_state``).
Why they are these: doc/source/admin/trait-ownership.rst.

``OwnerRule`` is decided once from the configuration (``NodePlan.rule``)
and handed whole to the reporter; ``OwnerRule.on_provider`` applies it to
one provider, given the records there, as an ``Ownership``. Pure: no HTTP,
no file.
"""

import dataclasses

from image_type_common import exceptions
from image_type_common import image_types
from image_type_common import trait_names
from virt_capabilities import metadata_traits

#: The ownership rules: name -> what it guarantees.
RULES = {
    'ownable-only': (
        'only an image-type trait, a custom trait or one of the '
        'image-metadata table\'s is ever owned; any other '
        '(``COMPUTE_NODE``, ``COMPUTE_STATUS_DISABLED`` ...) never, '
        'whatever a caller or the state file says.'),
    'image-types-by-option': (
        'the ``COMPUTE_IMAGE_TYPE_*`` traits are owned only with '
        '``image_type_traits_owner = reporter``, and then all of them (one '
        'not kept is removed); by default the reporter never touches one.'),
    'kept-or-remembered': (
        'it owns the custom and image-metadata traits it keeps, and those '
        'its record of the provider holds (removed once no longer kept).'),
    'others-records-protect': (
        'a trait another reporter\'s record of the provider holds is never '
        'removed by this one: a trait two reporters set stays until both '
        'have dropped it.'),
    'recorded-only-if-set': (
        'after a sync its record holds its custom traits and, of the '
        'image-metadata traits it keeps, those it added, now or before (one '
        'somebody else set first is never its to remove); never a trait '
        'Placement does not know.'),
    'recorded-before-written': (
        'what a sync is about to add is recorded before it is written, so '
        'no failure leaves a trait set and not recorded.'),
    'failure-keeps-what-is-carried': (
        'after a failed write that was answered, the record keeps of the '
        'traits recorded ahead only those the provider carries; with no '
        'answer (``outcome_unknown``), all of them until a sync succeeds.'),
    'own-records-only': (
        'each reporter sharing the state file changes only its own '
        'records (under the file\'s lock, on the file as it is then); '
        'every other reporter\'s stays exactly as it is.'),
    'foreign-file-refused': (
        'a state file that is not the reporter\'s own format is refused '
        '(exit 2, nothing sent) and left exactly as it was.'),
    'unsaved-stops-sync': (
        'a state that cannot be saved stops the sync before anything more '
        'is written (``StateNotSaved``, exit 1).'),
    'reload-keeps-records': (
        'a reloaded service keeps what it set, also with no state file; '
        'another name\'s records in a file stay that reporter\'s.'),
    'remove-takes-its-own': (
        '``remove`` takes off what its records hold that no other '
        'reporter\'s does (and, owning the image types, those it keeps), '
        'then forgets its records; it refuses, changing nothing, when it '
        'cannot know what it set (no state file, or a missing one while it '
        'keeps custom or image-metadata traits).'),
    'remove-twice-writes-nothing': (
        'a remove that empties the state file leaves it saying so '
        '(``emptied_by_remove``); with nothing left to remove it writes '
        'nothing and succeeds.'),
}


def _ownable(trait):
    """``ownable-only``."""
    return (image_types.is_image_type_trait(trait)
            or trait_names.is_custom(trait)
            or trait in metadata_traits.ALL_TRAITS)


@dataclasses.dataclass(frozen=True)
class Ownership:
    """On one provider (or several, ``combined``): the traits to keep
    (``desired``) and the traits owned, whose absence a sync may bring
    about: ``owned``, and with ``image_type_namespace`` every
    ``COMPUTE_IMAGE_TYPE_*`` trait (``image-types-by-option``). Any other
    trait is somebody else's (``ownable-only``)."""

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
    """Which traits this reporter keeps: ``image_types`` (only with
    ``owns_image_types``), ``custom`` (``custom_traits`` and the
    volume-only marker) and ``metadata``; of its driver's image-metadata
    traits (``metadata_ownable``) it may also own those it recorded. A
    rule that keeps what it cannot own is a bug: ValueError."""

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
        """Of a state record, what this reporter may have set
        (``ownable-only``): custom traits and its driver's image-metadata
        traits."""
        return frozenset(t for t in record if trait_names.is_custom(t)
                         or t in self.metadata_ownable)

    def on_provider(self, record=frozenset(), others=frozenset(),
                    missing=frozenset()):
        """The Ownership on one provider (``kept-or-remembered``,
        ``others-records-protect``): ``record`` is this reporter's record
        there, ``others`` what the other reporters' records hold,
        ``missing`` the standard traits Placement does not know (kept once
        it does)."""
        previous = self.remembered(record) - (set(others) - self.desired)
        return Ownership(
            desired=self.desired - set(missing),
            owned=self.custom | self.metadata | previous,
            image_type_namespace=self.owns_image_types)

    def to_record(self, record=frozenset(), added=(), missing=frozenset()):
        """Its record of a provider after a sync
        (``recorded-only-if-set``)."""
        metadata = self.metadata & (set(added) | self.remembered(record))
        return (self.custom | metadata) - set(missing)

    def removal(self, record=frozenset(), others=frozenset()):
        """The Ownership ``remove`` applies on one provider
        (``remove-takes-its-own``)."""
        return Ownership(
            desired=frozenset(),
            owned=(self.remembered(record) - set(others)) | self.image_types)


def diff(current, target):
    """(added, removed) between two trait sets, each sorted."""
    current, target = set(current), set(target)
    return sorted(target - current), sorted(current - target)


def check_removable(rule, state_file, document):
    """ConfigError, before any request, when ``remove`` cannot know what
    this reporter set (``remove-takes-its-own``): no ``state_file``, or,
    with a rule that records anything, no file there (``document``, as
    ``ownership_state.read_document`` read it, is None)."""
    if not state_file:
        raise exceptions.ConfigError(
            'remove takes off what the state file says this reporter set, '
            'and this configuration keeps none ([DEFAULT] state_path and '
            '[virt_capabilities] state_file are unset): nothing is known '
            'to be its own')
    if rule.records_anything and document is None:
        # A one-off container without the state volume: the records of the
        # custom and image-metadata traits it set are elsewhere, and a run
        # here would remove none of them and delete the status file.
        raise exceptions.ConfigError(
            'remove takes off what the state file says this reporter set, '
            'and its state file %s does not exist: nothing is known to be '
            'its own, so nothing was changed (run remove where that file '
            'is, e.g. in a container with the state volume; if this '
            'reporter never added a trait, nothing is left to remove)'
            % state_file)
