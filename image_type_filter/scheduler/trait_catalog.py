"""What Placement knows about traits, asked rarely: which exist, and which
some provider carries.

A trait Placement does not know makes every allocation-candidate query that
names it a 400, so a filter must never name one: ``ensure`` creates the
reserved CUSTOM traits itself (``PUT /traits/CUSTOM_X`` is idempotent), so
they are known from the first request on, whatever order services start
in. Only a trait that could not be created is "unknown", and asked about
again at most every ``interval`` seconds.

``carried`` answers "does any host carry this trait?" from one cached
``GET /traits?associated=true``. A trait seen carried stays so (it costs
nothing per boot); a "nobody carries it" answer is trusted for ``interval``
seconds and then asked again, so a host that starts carrying it is seen
within that time and no boot costs an extra request.
"""

import logging
import time

from image_type_common import exceptions

LOG = logging.getLogger(__name__)
INTERVAL_SECONDS = 10.0


class TraitCatalog:
    def __init__(self, client, interval=INTERVAL_SECONDS,
                 clock=time.monotonic):
        self.client = client
        self.interval = interval
        self.clock = clock
        self._known = set()
        self._missing_asked_at = {}
        self._carried = set()
        self._carried_asked_at = None

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
        self._known |= made
        return made

    def known(self, traits):
        """The subset of ``traits`` Placement knows (at most one request).

        If Placement cannot be asked (down, or refusing the credentials),
        every trait counts as known: the allocation-candidate query that
        follows fails the same way, with the scheduler's own error.
        """
        traits = set(traits)
        now = self.clock()
        ask = {t for t in traits - self._known
               if now - self._missing_asked_at.get(t, -self.interval)
               >= self.interval}
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
                LOG.warning('Placement does not know trait(s) %s yet: no '
                            'host carries them, and no query names them',
                            ', '.join(sorted(ask - found)))
        return traits & self._known

    def carried_traits(self):
        """The traits some provider carries, as last asked; asked again
        once the answer is ``interval`` old. None when Placement cannot be
        asked."""
        now = self.clock()
        if (self._carried_asked_at is None or
                now - self._carried_asked_at >= self.interval):
            try:
                self._carried = self.client.list_associated_traits()
            except exceptions.Error as exc:
                LOG.warning('cannot tell which traits the hosts carry (%s)',
                            exc)
                return None
            self._carried_asked_at = now
        return set(self._carried)

    def carried(self, trait):
        """True or False: does any provider carry ``trait``? None when
        Placement cannot be asked (the caller then lets the query decide)."""
        if trait in self._carried:
            return True  # seen carried: no request
        carried = self.carried_traits()
        return None if carried is None else trait in carried


def for_placement(placement, settings):
    """A catalogue over ``placement`` (None without one), refreshed as
    ``settings`` (a FilterSettings) says."""
    if placement is None:
        return None
    return TraitCatalog(placement, settings.traits_refresh_interval)
