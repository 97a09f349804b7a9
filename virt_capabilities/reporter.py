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

"""Sync a node's owned traits to its resource providers in Placement.

Read, merge the owned namespace, write with the provider generation; on 409
re-read, re-merge and retry with jittered back-off. An unchanged provider
costs one request. A failed read writes nothing. With many providers, a
``GET /resource_providers?required=...`` query finds those already in sync so
only the stale ones are read and written.
"""

import dataclasses
import logging
import time

from image_type_common import backoff as backoff_mod
from image_type_common import control
from image_type_common import exceptions
from image_type_common import placement_client
from image_type_common import progress as progress_mod
from virt_capabilities import merge
from virt_capabilities import ownership_state
from virt_capabilities import providers
from virt_capabilities.conf import reporter as reporter_conf

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class SyncResult:
    uuid: str
    added: list = dataclasses.field(default_factory=list)
    removed: list = dataclasses.field(default_factory=list)
    conflicts: int = 0
    error: Exception = None

    @property
    def changed(self):
        return bool(self.added or self.removed)


@dataclasses.dataclass
class SyncReport:
    """What one sync cycle did, for exit codes, logs and benchmarks."""

    results: list = dataclasses.field(default_factory=list)
    missing_traits: frozenset = frozenset()
    missing_providers: list = dataclasses.field(default_factory=list)
    skipped_in_sync: int = 0
    #: Why the ownership state could not be saved (the sync stopped
    #: there), or None.
    state_error: Exception = None

    @property
    def errors(self):
        return [r for r in self.results if r.error is not None]

    @property
    def conflicts(self):
        return sum(r.conflicts for r in self.results)

    @property
    def ok(self):
        return not (self.errors or self.missing_traits
                    or self.missing_providers or self.state_error)


#: The longest wait between two tries after a 409, in seconds.
CONFLICT_BACKOFF_CAP = 5.0


class Reporter:
    """Keeps ``desired`` traits (and only the owned namespace) on providers.

    ``desired`` is what the plan decided (the owner rule already applied);
    ``owns_image_types`` says whether the image-type namespace is ours.
    ``metadata_traits`` are the image-metadata traits among ``desired``;
    of those it set before (in ``state``), only the ``metadata_ownable``
    ones are owned, so removed when no longer desired.
    """

    def __init__(self, client, desired, custom_traits=frozenset(),
                 state=None,
                 conflict_retries=reporter_conf.CONFLICT_RETRIES, backoff=0.05,
                 sleep=time.sleep, owns_image_types=True,
                 metadata_traits=frozenset(), metadata_ownable=frozenset()):
        self.client = client
        self.owns_image_types = owns_image_types
        self.desired = frozenset(desired)
        self.custom_traits = frozenset(custom_traits)
        self.metadata_traits = frozenset(metadata_traits)
        self.metadata_ownable = frozenset(metadata_ownable) | \
            self.metadata_traits
        self.state = state
        self.conflict_retries = conflict_retries
        self.backoff = backoff
        self.sleep = sleep
        self.missing = set()    # standard traits Placement does not know
        self._warned_missing = set()
        self._created = set()   # custom traits we made sure exist

    # -- ownership --------------------------------------------------------

    def ownership(self, uuid=None, uuids=()):
        """What it owns on ``uuid``, or on any of ``uuids``."""
        owned = [self._owned_on(u) for u in ([uuid] if uuid else uuids)]
        return merge.Ownership(
            desired=self.desired - self.missing,
            owned_custom=self.custom_traits.union(*(c for c, _ in owned)),
            image_types=self.owns_image_types,
            owned_metadata=self.metadata_traits.union(
                *(m for _, m in owned)))

    def _owned_on(self, uuid):
        """(custom, image-metadata) traits it set before on ``uuid`` and
        still owns: never one another reporter's record of the provider
        holds and this one no longer wants (a trait two reporters set
        stays while either still does). Those it sets are owned anyway."""
        previous = self.state.owned(uuid) if self.state else frozenset()
        held = (self.state.others(uuid) if self.state
                else frozenset()) - self.desired
        return (previous - held,
                (previous & self.metadata_ownable) - held)

    def _set_by_us(self, uuid, added=()):
        """What the state remembers as set by this reporter on ``uuid``
        after a sync: its custom traits (those Placement has), and of the
        image-metadata traits still reported only those it added, now or
        before. One somebody else had set first is never its to remove."""
        metadata = self.metadata_traits & (
            set(added) | (self.state.owned(uuid) if self.state else set()))
        return ((self.custom_traits - self.missing)
                | (metadata - self.missing))

    def _handle_unknown(self, exc, asked_for):
        """Create missing custom traits; remember (and warn of) standard ones.

        Returns False when the unknown traits are none we asked for, so the
        caller must give up rather than loop.
        """
        unknown = set(exc.traits) & set(asked_for)
        if not unknown:
            return False
        for trait in sorted(t for t in unknown if t.startswith('CUSTOM_')):
            if trait in self._created:
                return False
            self.client.create_trait(trait)
            self._created.add(trait)
            LOG.info('created custom trait %s in Placement', trait)
        standard = {t for t in unknown if not t.startswith('CUSTOM_')}
        new = standard - self._warned_missing
        if new:
            LOG.warning('Placement does not know trait(s) %s (it is older '
                        'than the installed os-traits); reporting the others',
                        ', '.join(sorted(new)))
            self._warned_missing |= new
        self.missing |= standard
        return True

    # -- one provider -----------------------------------------------------

    def preview(self, uuid):
        """(added, removed) a sync of this provider would make; one read."""
        current, _ = self.client.get_provider_traits(uuid)
        return merge.diff(current, self.ownership(uuid).target(current))

    def sync_provider(self, uuid):
        """Bring one provider's owned traits in line. Raises on failure."""
        with control.shielded():
            return self._sync_provider(uuid)

    def _sync_provider(self, uuid):
        result = SyncResult(uuid)
        attempt = 0
        while True:
            ownership = self.ownership(uuid)
            current, generation = self.client.get_provider_traits(uuid)
            target = ownership.target(current)
            if target == current:
                break
            try:
                self.client.put_provider_traits(uuid, target, generation)
            except exceptions.ConcurrentUpdate:
                result.conflicts += 1
                if attempt >= self.conflict_retries:
                    raise exceptions.PlacementError(
                        'provider %s: still conflicting after %d retries'
                        % (uuid, attempt))
                self.sleep(backoff_mod.delay(attempt, self.backoff,
                                             CONFLICT_BACKOFF_CAP))
                attempt += 1
                continue
            except exceptions.UnknownTraits as exc:
                if not self._handle_unknown(exc, target):
                    raise
                continue
            result.added, result.removed = merge.diff(current, target)
            LOG.info('provider %s: traits added %s, removed %s', uuid,
                     ','.join(result.added) or '-',
                     ','.join(result.removed) or '-')
            break
        if self.state is not None:
            self.state.record(uuid, self._set_by_us(uuid, result.added))
        return result

    # -- many providers ---------------------------------------------------

    def find_in_sync(self, uuids):
        """The subset of ``uuids`` whose owned traits are already right."""
        if not self.client.supports(placement_client.FORBIDDEN_TRAITS):
            return set()
        for _ in range(3):
            tokens = self.ownership(uuids=uuids).in_sync_filter(
                absent=self.missing)
            try:
                found = self.client.list_resource_providers(
                    required=','.join(tokens))
            except exceptions.UnknownTraits as exc:
                if not self._handle_unknown(exc, {t.lstrip('!')
                                                  for t in tokens}):
                    raise
                continue
            return {rp['uuid'] for rp in found} & set(uuids)
        return set()

    def sync(self, uuids, progress=None):
        """Sync every provider; one failure does not stop the others, a
        state that cannot be saved stops them all (``state_error``)."""
        uuids = list(dict.fromkeys(uuids))
        self.missing = set()  # Placement may have been upgraded: ask again
        report = SyncReport()
        if self.state is not None:
            # What the reporters sharing the file recorded since.
            self.state.refresh()
        try:
            if self.state is not None and (self.custom_traits
                                           or self.metadata_traits):
                # Before anything is written: what it sets must be
                # remembered. A reporter that sets nothing of its own
                # (only image types, or nothing) needs no writable state.
                self.state.prepare()
            self._sync(uuids, report, progress)
        except ownership_state.StateNotSaved as exc:
            report.state_error = exc
        report.missing_traits = frozenset(self.missing & self.desired)
        return report

    def _sync(self, uuids, report, progress):
        todo = uuids
        if len(uuids) >= providers.BULK_THRESHOLD:
            in_sync = self.find_in_sync(uuids)
            todo = [u for u in uuids if u not in in_sync]
            report.skipped_in_sync = len(uuids) - len(todo)
            if self.state is not None:
                self.state.record_each({uuid: self._set_by_us(uuid)
                                        for uuid in in_sync})
        bar = progress or progress_mod.Progress(len(todo), 'syncing providers')
        for uuid in todo:
            self.sleep(0)  # a stop request ends the sync here
            try:
                report.results.append(self.sync_provider(uuid))
            except (exceptions.PlacementUnavailable,
                    ownership_state.StateNotSaved):
                raise
            except exceptions.Error as exc:
                # Logged by whoever reads the report (service.summarize),
                # which knows whether it is news or the same outage again.
                report.results.append(SyncResult(uuid, error=exc))
            bar.advance()
        bar.done()
