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
names it a 400, so a filter must never name one; a boot refused because no
host carries a trait must be refused on a fresh answer. The catalogue's
correctness is the rules in ``RULES``, each held by a test named after it
(tests/unit/image_type_filter/scheduler/test_trait_catalog.py); the code
names the rule each step keeps.

One catalogue serves every request of a nova-scheduler process, and since
Nova 33 those run at once on native threads: its state changes only under
a lock, never across a Placement request, and each read takes a ticket
when it starts (``newest-read-wins``).
"""

import logging
import threading
import time

from image_type_common import exceptions

LOG = logging.getLogger(__name__)

#: The catalogue's rules: name -> what it guarantees.
RULES = {
    'reserved-created-at-start': (
        '``ensure`` creates the reserved CUSTOM traits (``PUT '
        '/traits/CUSTOM_X`` is idempotent), so they are known from the '
        'first request on, whatever order services start in; one that '
        'cannot be created is left to ``unknown-asked-again``.'),
    'unknown-asked-again': (
        'a trait Placement did not know is asked about again once that '
        'answer is ``interval`` old, or at once before a refusal '
        '(``fresh``).'),
    'outage-counts-as-known': (
        'while Placement cannot be asked, every trait counts as known: '
        'the allocation-candidate query then fails the same way, with the '
        'scheduler\'s own error.'),
    'carried-stays-carried': (
        'a trait seen carried stays so: the common path (a boot whose '
        'traits some host has) makes no request.'),
    'nobody-from-a-fresh-read': (
        '"no host carries it" is answered only from a read that started '
        'after the cached answer said so, so a host that has just started '
        'carrying the trait takes the very next boot that needs it.'),
    'failure-remembered': (
        'a read that fails is remembered for ``interval``: meanwhile the '
        'answer is "cannot tell" (None) with no request, and one WARNING '
        'per failed read, so an outage adds no request per boot.'),
    'newest-read-wins': (
        'an answer replaces the shared one only if no read that started '
        'later has answered already, so a slow read that began before a '
        'trait appeared never hides it again.'),
}


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
        """``(read(), ticket)``, or ``(None, ticket)`` when it fails
        (``failure-remembered``, ``newest-read-wins``)."""
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
        """Create these CUSTOM traits in Placement; return those that exist
        (``reserved-created-at-start``)."""
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
        """The subset of ``traits`` Placement knows, in at most one request
        (``unknown-asked-again``, ``outage-counts-as-known``)."""
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
        Placement cannot be asked (the caller then lets the query decide):
        ``carried-stays-carried``, ``nobody-from-a-fresh-read``,
        ``newest-read-wins``."""
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
