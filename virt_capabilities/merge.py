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

"""Pure trait-merge logic: what a provider's traits become after a sync.

Kept apart from HTTP so every rule is unit-testable without a server.
"""

import dataclasses

from image_type_common import image_types
from image_type_common import trait_names
from virt_capabilities import metadata_traits


@dataclasses.dataclass(frozen=True)
class Ownership:
    """The traits the reporter wants on a provider, and the ones it owns.

    It owns the whole image-type namespace (unless nova-compute does), the
    custom traits it is configured with, and the custom traits it set earlier
    (so that dropping one from the configuration removes it). Of the
    image-metadata traits (``metadata_traits``, which nova-compute never
    writes) it owns exactly those handed over in ``owned_metadata``: the
    ones it reports and the ones it set earlier, never the whole prefix.
    Every other trait belongs to someone else: a standard trait handed over
    in ``owned_custom``, or one outside the metadata table handed over in
    ``owned_metadata`` (from a state file, say), is never owned.
    """

    desired: frozenset
    owned_custom: frozenset = frozenset()
    image_types: bool = True
    owned_metadata: frozenset = frozenset()

    def __post_init__(self):
        object.__setattr__(self, 'owned_custom', frozenset(
            t for t in self.owned_custom if trait_names.is_custom(t)))
        object.__setattr__(self, 'owned_metadata', frozenset(
            self.owned_metadata) & metadata_traits.ALL_TRAITS)
        foreign = sorted(t for t in self.desired if not self.owns(t))
        if foreign:
            raise ValueError('desired traits outside the owned namespace: %s'
                             % ', '.join(foreign))

    def owns(self, trait):
        return ((self.image_types and image_types.is_image_type_trait(trait))
                or trait in self.owned_custom
                or trait in self.owned_metadata)

    def target(self, current):
        """``current`` with the owned namespace set to ``desired``."""
        return {t for t in current if not self.owns(t)} | set(self.desired)

    def in_sync_filter(self, absent=frozenset()):
        """``required`` tokens matching exactly the providers already in sync.

        All desired traits, and ``!trait`` for every owned trait not desired;
        ``absent`` traits (which Placement does not know) are left out.
        """
        owned = set(image_types.TRAITS if self.image_types else ()) | \
            self.owned_custom | self.owned_metadata
        desired = self.desired - set(absent)
        forbidden = owned - self.desired - set(absent)
        return sorted(desired) + ['!' + t for t in sorted(forbidden)]


def diff(current, target):
    """(added, removed) between two trait sets, each sorted."""
    current, target = set(current), set(target)
    return sorted(target - current), sorted(current - target)
