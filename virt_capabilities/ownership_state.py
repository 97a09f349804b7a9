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

"""The ownership state: which traits each reporter set on which provider.

Without it a trait dropped from ``custom_traits`` (or an image-metadata
trait switched off) could not be told apart from one somebody else set.
What the records may make the reporter do is
``virt_capabilities.ownership``'s ``RULES``; this module keeps the file
(``own-records-only``, ``foreign-file-refused``, ``unsaved-stops-sync``).
One record per provider and reporter (``settings.reporter_name``)::

    {"format": "virt-capabilities-ownership/1",
     "providers": {"<provider uuid>": {"<reporter name>": ["CUSTOM_A"]}}}

With no path it lives in memory only, for the life of the process.
"""

import contextlib
import errno
import fcntl
import json
import os
import time

from image_type_common import exceptions
from virt_capabilities import files

#: Written into every state file: one record per provider and reporter.
FORMAT = 'virt-capabilities-ownership/1'
FORMAT_KEY = 'format'
#: Set in a file a remove left with nobody's record (the next write of a
#: record drops it).
EMPTIED_KEY = 'emptied_by_remove'
#: The name a library caller's state (one reporter) records under.
DEFAULT_NAME = 'virt-capabilities'
#: How long a write waits for another reporter's write to the same file
#: (a few local file operations) before giving up, in seconds.
LOCK_TIMEOUT = 30.0
_LOCK_POLL = 0.02


class StateNotSaved(exceptions.Error):
    """The ownership state could not be written: what was set in Placement
    is not remembered, so the run is a failure (exit 1)."""


def lock_path(path):
    """The lock file every reporter sharing ``path`` writes under."""
    directory, name = os.path.split(os.path.abspath(path))
    return os.path.join(directory, '.%s.lock' % name)


def _refuse(path, why):
    return exceptions.ConfigError(
        'state file %s is not this reporter\'s ownership state (%s): it '
        'must be missing, or a JSON object with "%s": "%s" and its '
        '"providers"; point [virt_capabilities] state_file elsewhere, or '
        'move the file away' % (path, why, FORMAT_KEY, FORMAT))


def read_document(path):
    """The state file at ``path`` as a dict, None when there is none;
    ConfigError when it cannot be read or is not in the module's format
    (``foreign-file-refused``: never quoted, it may be anything)."""
    if not path:
        return None
    try:
        with open(path, encoding='utf-8') as f:
            data = json.load(f)
    except (FileNotFoundError, NotADirectoryError):
        # No such file (nothing to lose); whether one can be made there is
        # for the first write to say (StateNotSaved).
        return None
    except OSError as exc:
        raise exceptions.ConfigError(
            'cannot read state file %s (%s): it must be missing or this '
            'reporter\'s own, readable JSON file' % (path,
                                                       exc.strerror or exc))
    except ValueError:  # UnicodeDecodeError too
        raise _refuse(path, 'not JSON in UTF-8')
    if not isinstance(data, dict) or FORMAT_KEY not in data:
        raise _refuse(path, 'no JSON object with "%s"' % FORMAT_KEY)
    if data[FORMAT_KEY] != FORMAT:
        raise _refuse(path, 'another format, perhaps of a newer version')
    providers = data.setdefault('providers', {})
    if not (isinstance(providers, dict) and all(
            isinstance(entry, dict) and all(
                isinstance(traits, list)
                and all(isinstance(t, str) for t in traits)
                for traits in entry.values())
            for entry in providers.values())):
        raise _refuse(path, 'its "providers" are not lists of trait names '
                            'by provider uuid and reporter name')
    return data


class OwnershipState:
    """One reporter's view of the state: its own records and the other
    reporters', by provider. ``name``: the reporter's name in the file."""

    def __init__(self, path, sleep=time.sleep, clock=time.monotonic,
                 name=DEFAULT_NAME):
        self.path = path
        self.name = name
        self._sleep = sleep
        self._clock = clock
        # This reporter's records: read once, then changed only by its own
        # writes (another process of the same name is the same reporter).
        self._own = {}
        self._others = {}     # {uuid: what the other reporters recorded}
        self._load(read_document(path), own=True)

    def _load(self, document, own=False):
        """Take the others' records from ``document`` (and its own, when
        ``own``), as they are: the module says what they may make it do."""
        others = {}
        for uuid, entry in (document or {}).get('providers', {}).items():
            for name, traits in entry.items():
                if name == self.name:
                    if own and traits:
                        self._own[uuid] = frozenset(traits)
                elif traits:
                    others[uuid] = others.get(uuid, frozenset()) | set(traits)
        self._others = others

    def refresh(self):
        """Read the other reporters' records again (they may have written
        since): before each sync. ConfigError if the file is no longer
        the reporter's own."""
        self._load(read_document(self.path))

    def owned(self, uuid):
        """This reporter's record of ``uuid``: what it set there."""
        return self._own.get(uuid, frozenset())

    def others(self, uuid):
        """What the other reporters recorded on ``uuid``: never this one's
        to remove, even where its own record holds it too."""
        return self._others.get(uuid, frozenset())

    @property
    def providers(self):
        """The providers this reporter holds a record of."""
        return sorted(self._own)

    def adopt(self, other):
        """Also own what ``other`` (a previous job's state) owned
        (``reload-keeps-records``); the next ``record`` writes it."""
        if other is self or (
                self.path and other.path and other.name != self.name):
            return
        for uuid, traits in other._own.items():
            self._own[uuid] = self._own.get(uuid, frozenset()) | traits

    def prepare(self):
        """StateNotSaved, before anything is sent, if the file's directory
        or lock file cannot be made. Nothing else is written."""
        if self.path:
            with self._locked():
                pass

    def record(self, uuid, traits):
        """Remember that this reporter set ``traits`` on ``uuid`` (an
        empty set forgets the provider)."""
        self.record_each({uuid: traits})

    def record_each(self, traits_by_uuid, by_remove=False):
        """``record`` for several providers, one file write at most, none
        when nothing changes; StateNotSaved when the file cannot be
        written. ``by_remove``: ``remove-twice-writes-nothing``."""
        changes = {uuid: frozenset(traits)
                   for uuid, traits in traits_by_uuid.items()
                   if self._own.get(uuid, frozenset()) != frozenset(traits)}
        if not changes:
            return
        if self.path:
            self._save(changes, by_remove)
        self._own = {uuid: traits for uuid, traits
                     in {**self._own, **changes}.items() if traits}

    def _failed(self, why):
        return StateNotSaved(
            'cannot save ownership state %s (%s): sync stopped, since a '
            'trait set and not remembered would never be removed; make it '
            'writable or point [virt_capabilities] state_file elsewhere'
            % (self.path, why))

    @contextlib.contextmanager
    def _locked(self):
        """Exclusively hold the file's lock (every reporter sharing it
        takes it to write), waiting at most LOCK_TIMEOUT."""
        lock = lock_path(self.path)
        try:
            os.makedirs(os.path.dirname(lock), exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise self._failed(exc.strerror or exc) from exc
        try:
            deadline = self._clock() + LOCK_TIMEOUT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
                        raise self._failed(exc.strerror or exc) from exc
                    if self._clock() >= deadline:
                        raise self._failed(
                            '%s held by another process for over %g s'
                            % (lock, LOCK_TIMEOUT)) from exc
                    self._sleep(_LOCK_POLL)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _save(self, changes, by_remove=False):
        """``own-records-only``: read the file again under the lock,
        change this reporter's records of ``changes``' providers, write it
        back."""
        with self._locked():
            try:
                # It may have changed (another reporter) or been replaced
                # since it was read: what is there now is what is kept.
                document = read_document(self.path)
            except exceptions.ConfigError as exc:
                raise self._failed(exc) from exc
            # Every other reporter's record is kept as the file has it.
            records = dict(document['providers'] if document else {})
            for uuid, traits in changes.items():
                entry = {name: t for name, t in records.get(uuid, {}).items()
                         if name != self.name}
                if traits:
                    entry[self.name] = sorted(traits)
                if entry:
                    records[uuid] = dict(sorted(entry.items()))
                else:
                    records.pop(uuid, None)
            data = {FORMAT_KEY: FORMAT,
                    'providers': dict(sorted(records.items()))}
            if by_remove and not records:
                data[EMPTIED_KEY] = True
            try:
                files.write_atomically(self.path, json.dumps(data, indent=1))
            except OSError as exc:
                raise self._failed(exc.strerror or exc) from exc
            # What the others recorded, as fresh as it gets.
            self._load(data)
