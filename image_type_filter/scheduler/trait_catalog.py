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

"""What Placement knows about traits: which exist, and which some provider
carries, asked as rarely as a correct answer allows.

A trait Placement does not know makes every allocation-candidate query that
names it a 400, so a filter must never name one: ``ensure`` creates the
reserved CUSTOM traits itself (``PUT /traits/CUSTOM_X`` is idempotent), so
they are known from the first request on, whatever order services start
in. A trait Placement does not know is asked about again at most every
``interval`` seconds.

``uncarried`` answers "which of these traits does no host carry?", the
question behind every "No compute host ..." refusal. A trait seen carried
stays so: the common path (a boot whose traits some host has) makes no
request. A trait not seen carried is read again, one
``GET /traits?associated=true``, before the answer is "nobody": a boot is
refused only on an answer read after the cached one said so, so a host that
has just started carrying the trait takes the very next boot that needs it.

A read that fails (Placement down, credentials refused) is remembered for
``interval`` seconds: meanwhile the catalogue answers "cannot tell" (None)
with no request, and the allocation-candidate query decides, so an outage
adds no request per boot.

One catalogue serves every request of a nova-scheduler process, and since
Nova 33 those run at once on native threads. Its state changes only under
a lock, never across a Placement request; each read takes a ticket when it
starts, and an answer replaces the shared one only if no read that started
later has answered already. So a slow read that began before a trait
appeared never hides it again from the requests after it (a refusal is
still only ever made on a read that started after the cached "nobody").
"""

import logging
import threading
import time

from image_type_common import exceptions

LOG = logging.getLogger(__name__)


class TraitCatalog:
    def __init__(self, client, interval, clock=time.monotonic):
        self.client = client
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._known = set()
        self._missing_asked_at = {}
        self._carried = set()
        #: The ticket of the read ``_carried`` comes from.
        self._carried_ticket = 0
        self._failed_at = None
        #: The ticket of the newest read that answered or failed.
        self._answered_ticket = 0
        self._tickets = 0

    def _failing(self, now):
        """True while a failed read is younger than ``interval``."""
        with self._lock:
            return (self._failed_at is not None
                    and now - self._failed_at < self.interval)

    def _ask(self, what, read, now):
        """``(read(), ticket)``, or ``(None, ticket)`` when it fails (the
        failure is remembered for ``interval``, unless a read that started
        later has answered already).

        One WARNING per failed read, so at most one per interval and
        request running at once.
        """
        with self._lock:
            self._tickets += 1
            ticket = self._tickets
        try:
            answer = read()
        except exceptions.Error as exc:  # unreachable, refused ...
            with self._lock:
                if ticket > self._answered_ticket:
                    self._answered_ticket = ticket
                    self._failed_at = now
            LOG.warning('cannot tell %s (%s); asking Placement again in '
                        '%g s', what, exc, self.interval)
            return None, ticket
        with self._lock:
            if ticket > self._answered_ticket:
                self._answered_ticket = ticket
                self._failed_at = None
        return answer, ticket

    def ensure(self, traits):
        """Create these CUSTOM traits in Placement; return those that exist.

        A trait that cannot be created now (Placement down, refusing the
        credentials) is left to ``known``, which asks again later.
        """
        made = set()
        for trait in sorted(traits):
            try:
                self.client.create_trait(trait)
            except exceptions.Error as exc:
                LOG.warning('could not create reserved trait %s in '
                            'Placement (%s); it is forbidden nowhere until '
                            'Placement knows it', trait, exc)
                continue
            made.add(trait)
        with self._lock:
            self._known |= made
        return made

    def known(self, traits, fresh=False):
        """The subset of ``traits`` Placement knows (at most one request).

        A trait Placement did not know is asked about again once its answer
        is ``interval`` old, or at once with ``fresh`` (before a refusal).
        If Placement cannot be asked, every trait counts as known: the
        allocation-candidate query that follows fails the same way, with
        the scheduler's own error.
        """
        traits = set(traits)
        now = self.clock()
        with self._lock:
            ask = {t for t in traits - self._known
                   if fresh or now - self._missing_asked_at.get(
                       t, -self.interval) >= self.interval}
        if ask:
            if self._failing(now):
                return traits
            found, _ = self._ask('which traits Placement knows',
                                 lambda: self.client.list_traits(ask), now)
            if found is None:
                return traits
            with self._lock:
                self._known |= found
                for trait in ask - self._known:
                    self._missing_asked_at[trait] = now
                for trait in found:
                    self._missing_asked_at.pop(trait, None)
            if ask - found:
                LOG.warning('Placement does not know trait(s) %s yet: no '
                            'host carries them, and no query names them',
                            ', '.join(sorted(ask - found)))
        with self._lock:
            return traits & self._known

    def uncarried(self, traits):
        """The subset of ``traits`` no provider carries, or None when
        Placement cannot be asked (the caller then lets the query decide).

        No request when every trait has been seen carried; otherwise one
        read, so "nobody" is never an old answer. The answer is that read's,
        or a newer one's if a read that started later has answered first.
        """
        with self._lock:
            maybe = set(traits) - self._carried
        if not maybe:
            return set()
        now = self.clock()
        if self._failing(now):
            return None
        carried, ticket = self._ask('which traits the hosts carry',
                                    self.client.list_associated_traits, now)
        if carried is None:
            return None
        with self._lock:
            if ticket > self._carried_ticket:
                self._carried, self._carried_ticket = set(carried), ticket
            newest = self._carried
            return maybe - newest

    def carried(self, trait):
        """True or False: does any provider carry ``trait``? None when
        Placement cannot be asked."""
        nobody = self.uncarried({trait})
        return None if nobody is None else not nobody

    def carried_traits(self):
        """The traits some provider carries, as last read (for messages
        that follow a refusal: no request)."""
        with self._lock:
            return set(self._carried)


def for_placement(placement, settings):
    """A catalogue over ``placement`` (None without one), refreshed as
    ``settings`` (a FilterSettings) says."""
    if placement is None:
        return None
    return TraitCatalog(placement, settings.traits_refresh_interval)
