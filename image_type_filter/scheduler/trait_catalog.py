"""Which reserved traits Placement knows, asked rarely.

A trait Placement does not know makes every allocation-candidate query that
names it a 400, so the isolation filter must not name one. Traits are
created (by the reporter) and almost never deleted: a known trait stays
known, and a missing one is asked about again at most every ``recheck``
seconds, so a trait created later is used within that time.
"""

import logging
import time

from image_type_common import exceptions

LOG = logging.getLogger(__name__)
RECHECK_SECONDS = 30.0


class TraitCatalog:
    def __init__(self, client, recheck=RECHECK_SECONDS, clock=time.monotonic):
        self.client = client
        self.recheck = recheck
        self.clock = clock
        self._known = set()
        self._missing_asked_at = {}

    def known(self, traits):
        """The subset of ``traits`` Placement knows (at most one request).

        If Placement cannot be asked (down, or refusing the credentials),
        every trait counts as known: the allocation-candidate query that
        follows fails the same way, with the scheduler's own error.
        """
        traits = set(traits)
        now = self.clock()
        ask = {t for t in traits - self._known
               if now - self._missing_asked_at.get(t, -self.recheck)
               >= self.recheck}
        if ask:
            try:
                found = self.client.list_traits(ask)
            except exceptions.Error as exc:  # unreachable, refused ...
                LOG.warning('cannot tell which reserved traits Placement '
                            'knows (%s); assuming it knows them all', exc)
                return traits
            self._known |= found
            for trait in ask - found:
                self._missing_asked_at[trait] = now
            for trait in found:
                self._missing_asked_at.pop(trait, None)
            if ask - found:
                LOG.warning('Placement does not know reserved trait(s) %s '
                            'yet: no host carries them, so they are '
                            'forbidden nowhere',
                            ', '.join(sorted(ask - found)))
        return traits & self._known
