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

"""Sync a node's traits to its resource providers, by its owner rule.

Which traits it owns, and what it records, is
``virt_capabilities.ownership`` (its ``RULES``). Read, apply the owner rule
(decided by the plan), write with the provider generation; on 409 re-read
and retry with jittered back-off. An unchanged provider costs one request.
With many providers, a ``GET /resource_providers?required=`` query finds
those already in sync so only the stale ones are read and written.

A provider's traits are read and written through a trait store
(``PlacementTraits``, or ``ironic_node_traits.IronicNodeTraits``), so that
the traits of a provider whose writer takes them from elsewhere
(nova-compute's ironic driver copies an Ironic node's own traits over its
provider's on every update: ``drivers.Driver.replaces_provider_traits``)
can be written where that writer reads them. A store has five calls and
two attributes:

* ``read(uuid)``: (traits, generation), the generation being whatever
  ``write`` needs to refuse a concurrent change (None if nothing);
* ``write(uuid, traits, generation)``: make the provider carry exactly
  ``traits``; ``exceptions.ConcurrentUpdate`` if it changed since the read
  (the reporter reads again and retries), ``exceptions.UnknownTraits`` for
  traits the store does not know;
* ``create_trait(name)``: make a custom trait known;
* ``resolve_with_wait(refs, wait, sleep)``: (its uuids of ``refs`` in
  ref order, the refs not found), waited for as ``providers.wait_for``
  says;
* ``in_sync(tokens)``: the providers whose traits match Placement's
  ``required`` ``tokens`` (all desired, none of the ``!`` ones), or None
  when the store cannot ask that in one query;
* ``kind``: what its providers are, as a log line names one
  (``provider``, ``Ironic node``);
* ``outcome_unknown``: the errors of a ``write`` after which what it
  changed cannot be known (no answer: ``failure-keeps-what-is-carried``).
"""

import dataclasses
import logging
import time

from image_type_common import control
from image_type_common import exceptions
from virt_capabilities import ownership
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
    #: What was synced, as a log line names one (the store's ``kind``).
    kind: str = 'provider'
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
    def ok(self):
        return not (self.errors or self.missing_traits
                    or self.missing_providers or self.state_error)

    def missing_line(self):
        return providers.missing_line(self.kind, self.missing_providers)


class PlacementTraits:
    """A provider's traits in Placement: one GET to read, one PUT with the
    provider generation to write."""

    kind = 'provider'
    #: No answer after the configured retries: the PUT may have been
    #: applied.
    outcome_unknown = (exceptions.PlacementUnavailable,)

    def __init__(self, client):
        self.client = client

    def read(self, uuid):
        return self.client.get_provider_traits(uuid)

    def write(self, uuid, traits, generation):
        self.client.put_provider_traits(uuid, traits, generation)

    def create_trait(self, name):
        self.client.create_trait(name)

    def resolve_with_wait(self, refs, wait=0.0, sleep=time.sleep):
        return providers.resolve_with_wait(self.client, refs, wait, sleep)

    def in_sync(self, tokens):
        return {rp['uuid'] for rp in self.client.list_resource_providers(
            required=','.join(tokens))}


class Reporter:
    """Keeps ``rule``'s traits on providers, through ``store`` (Placement
    through ``client`` unless given); ``state``: the records, by default
    in memory for the reporter's life."""

    def __init__(self, client, rule, state=None,
                 conflict_retries=reporter_conf.CONFLICT_RETRIES,
                 backoff=reporter_conf.CONFLICT_BACKOFF,
                 sleep=time.sleep, store=None):
        self.rule = rule
        self.store = store or PlacementTraits(client)
        self.state = (state if state is not None
                      else ownership_state.OwnershipState(None))
        self.conflict_retries = conflict_retries
        self.backoff = backoff
        self.sleep = sleep
        self.missing = set()    # standard traits Placement does not know
        self._warned_missing = set()
        self._created = set()   # custom traits we made sure exist

    def ownership(self, uuid):
        """What it keeps and owns on ``uuid``."""
        return self.rule.on_provider(self.state.owned(uuid),
                                     self.state.others(uuid), self.missing)

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
            self.store.create_trait(trait)
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

    def preview(self, uuid):
        """(added, removed) a sync of this provider would make; one read."""
        current, _ = self.store.read(uuid)
        return ownership.diff(current,
                              self.ownership(uuid).target(current))

    def sync_provider(self, uuid):
        """Bring one provider's owned traits in line. Raises on failure.
        Its record: ``recorded-before-written``, then
        ``recorded-only-if-set`` or ``failure-keeps-what-is-carried``."""
        intended = set()

        def intend(added):  # recorded-before-written
            new = self.rule.remembered(added) - self.state.owned(uuid)
            if new:
                self.state.record(uuid, self.state.owned(uuid) | new)
                intended.update(new)

        with control.shielded():
            try:
                result = self._apply(uuid, self.ownership, intend)
            except (exceptions.Error, control.Interrupted) as exc:
                # A stop or reload in the 409 back-off unwinds here too:
                # the traits recorded ahead were never written.
                self._keep_what_was_written(uuid, intended, exc)
                raise
            self.state.record(uuid, self.rule.to_record(
                self.state.owned(uuid), result.added, self.missing))
            return result

    def _keep_what_was_written(self, uuid, intended, exc):
        """``failure-keeps-what-is-carried``, after a failed or
        interrupted write; a provider that cannot be read now keeps the
        record as it is."""
        if not intended or isinstance(exc, self.store.outcome_unknown):
            return
        try:
            carried, _ = self.store.read(uuid)
            self.state.record(uuid, self.state.owned(uuid) - (
                intended - set(carried)))
        except exceptions.Error as again:
            LOG.debug('provider %s: the traits recorded before the failed '
                      'write stay recorded (%s)', uuid, again)

    def remove_provider(self, uuid):
        """``remove-takes-its-own`` on one provider; one that is gone has
        its record forgotten."""
        with control.shielded():
            try:
                result = self._apply(uuid, lambda u: self.rule.removal(
                    self.state.owned(u), self.state.others(u)))
            except exceptions.ProviderNotFound:
                result = SyncResult(uuid)
                LOG.info('provider %s no longer exists: its record is '
                         'dropped', uuid)
            self.state.record_each({uuid: frozenset()}, by_remove=True)
            return result

    def _apply(self, uuid, ownership_of, before_write=None):
        """The module's read, apply and write, by ``ownership_of(uuid)``;
        ``before_write(added)`` before each write."""
        result = SyncResult(uuid)
        attempt = 0
        while True:
            owned = ownership_of(uuid)
            current, generation = self.store.read(uuid)
            target = owned.target(current)
            if target == current:
                return result
            if before_write is not None:
                before_write(set(target) - set(current))
            try:
                self.store.write(uuid, target, generation)
            except exceptions.ConcurrentUpdate:
                result.conflicts += 1
                if attempt >= self.conflict_retries:
                    raise exceptions.PlacementError(
                        'provider %s: still conflicting after %d retries'
                        % (uuid, attempt))
                self.sleep(self.backoff.delay(attempt))
                attempt += 1
                continue
            except exceptions.UnknownTraits as exc:
                if not self._handle_unknown(exc, target):
                    raise
                continue
            result.added, result.removed = ownership.diff(current, target)
            LOG.info('%s %s: traits added %s, removed %s',
                     self.store.kind, uuid, ','.join(result.added) or '-',
                     ','.join(result.removed) or '-')
            return result

    def find_in_sync(self, uuids):
        """The subset of ``uuids`` whose owned traits are already right."""
        for _ in range(3):
            tokens = ownership.combined(
                self.ownership(u) for u in uuids).in_sync_filter(
                absent=self.missing)
            try:
                found = self.store.in_sync(tokens)
            except exceptions.UnknownTraits as exc:
                if not self._handle_unknown(exc, {t.lstrip('!')
                                                  for t in tokens}):
                    raise
                continue
            return (found or set()) & set(uuids)
        return set()

    def sync(self, uuids):
        """Sync every provider; one failure does not stop the others, a
        state that cannot be saved stops them all (``state_error``)."""
        self.missing = set()  # Placement may have been upgraded: ask again
        # A reporter that sets nothing of its own (only image types, or
        # nothing) needs no writable state.
        report = self._run(self.sync_provider, uuids,
                           self.rule.records_anything, skip_in_sync=True)
        report.missing_traits = frozenset(self.missing & self.rule.desired)
        return report

    def remove(self, uuids):
        """Remove what it set from every provider in ``uuids``, as
        ``sync`` goes."""
        return self._run(self.remove_provider, uuids, True)

    def _run(self, act, uuids, prepare, skip_in_sync=False):
        """``act(uuid)`` for each of ``uuids``, with the others' records
        fresh and, with ``prepare``, the state writable before anything is
        written (``unsaved-stops-sync``). ``skip_in_sync``: with many
        providers, those one query finds in sync are skipped."""
        report = SyncReport(kind=self.store.kind)
        uuids = list(dict.fromkeys(uuids))
        self.state.refresh()
        try:
            if prepare:
                self.state.prepare()
            if skip_in_sync and len(uuids) >= providers.BULK_THRESHOLD:
                in_sync = self.find_in_sync(uuids)
                uuids = [u for u in uuids if u not in in_sync]
                report.skipped_in_sync = len(in_sync)
                self.state.record_each({uuid: self.rule.to_record(
                    self.state.owned(uuid), (), self.missing)
                    for uuid in in_sync})
            for uuid in uuids:
                self.sleep(0)  # a stop request ends the run here
                try:
                    report.results.append(act(uuid))
                except (exceptions.PlacementUnavailable,
                        exceptions.CredentialsRefused,
                        ownership_state.StateNotSaved):
                    raise  # the whole run's, not one provider's
                except exceptions.Error as exc:
                    # Logged by whoever reads the report
                    # (service.summarize), which knows whether it is news
                    # or the same outage again.
                    report.results.append(SyncResult(uuid, error=exc))
        except ownership_state.StateNotSaved as exc:
            report.state_error = exc
        return report
