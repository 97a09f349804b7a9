"""Remembers which custom traits the reporter set on which provider.

Without it a trait dropped from ``custom_traits`` could not be told apart from
one somebody else set. Written atomically (temp file + rename), and only when
it changes.
"""

import json
import logging
import os
import tempfile

LOG = logging.getLogger(__name__)


class OwnershipState:
    def __init__(self, path):
        self.path = path
        self._owned = self._load()

    def _load(self):
        if not self.path:
            return {}
        try:
            with open(self.path) as f:
                data = json.load(f)
            return {uuid: frozenset(traits)
                    for uuid, traits in data.get('providers', {}).items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, AttributeError) as exc:
            LOG.warning('ignoring unreadable ownership state %s: %s',
                        self.path, exc)
            return {}

    def owned(self, uuid):
        return self._owned.get(uuid, frozenset())

    def all_owned(self):
        return frozenset().union(*self._owned.values())

    def record(self, uuid, custom_traits):
        self.record_many([uuid], custom_traits)

    def record_many(self, uuids, custom_traits):
        """Set what we own on these providers; one file write at most."""
        custom_traits = frozenset(custom_traits)
        changed = False
        for uuid in uuids:
            if self._owned.get(uuid, frozenset()) == custom_traits:
                continue
            changed = True
            if custom_traits:
                self._owned[uuid] = custom_traits
            else:
                self._owned.pop(uuid, None)
        if changed:
            self._save()

    def _save(self):
        if not self.path:
            return
        data = {'providers': {u: sorted(t) for u, t in
                              sorted(self._owned.items())}}
        directory = os.path.dirname(os.path.abspath(self.path))
        tmp = None
        try:
            os.makedirs(directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=directory, prefix='.ownership-')
            with os.fdopen(fd, 'w') as f:
                json.dump(data, f, indent=1)
            os.replace(tmp, self.path)
            tmp = None
        except OSError as exc:
            LOG.warning('could not save ownership state %s: %s',
                        self.path, exc)
        finally:
            if tmp is not None:  # failed or interrupted: no stray file
                os.unlink(tmp)
