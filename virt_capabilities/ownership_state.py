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

"""Remembers which custom traits the reporter set on which provider.

Without it a trait dropped from ``custom_traits`` could not be told apart from
one somebody else set. The image-metadata traits it set (``metadata_traits``)
are remembered the same way, so that switching them off removes those and no
other. It is state that cannot hurt:

* only well-formed ``CUSTOM_*`` names, and the few standard names the caller
  allows (the image-metadata traits of this node's driver, which
  nova-compute never writes), are ever read from it, so whatever the file
  says, no other standard trait (``COMPUTE_STATUS_DISABLED`` and the rest of
  nova-compute's) is ever removed because of it;
* a file that exists and is not the reporter's own JSON is refused (a
  ConfigError, before anything is sent) and never replaced;
* an entry of the wrong type in its own file is warned about and ignored,
  the other entries are kept.

It is shared. Several reporters may keep their records in one file (one
``state_path`` for a fleet, nodes of different drivers): the file is keyed
by provider uuid, and a reporter only ever changes the entries of the
providers it synced. Each write is a read-modify-write of the file under an
exclusive lock (``.<name>.lock`` beside it), so two reporters writing at once
lose neither's entries; an entry another reporter wrote (another driver's
image-metadata traits, say) is kept as it is, never judged by this one's
driver. The file is written atomically and durably (temp file fsynced,
renamed, the directory fsynced), only when it changes; a new file is private
(0600), a replaced one keeps its mode. A state that cannot be saved is
``StateNotSaved``: the sync stops there and the command fails naming the
file, for a trait set and not remembered would stay for ever.

With no path it lives in memory only, for the life of the process (a
service's reload hands it to the re-read job: see ``adopt``).
"""

import contextlib
import errno
import fcntl
import json
import logging
import os
import stat
import tempfile
import time

from image_type_common import exceptions
from image_type_common import trait_names
from virt_capabilities import metadata_traits

LOG = logging.getLogger(__name__)

#: Written into every state file; a file without it is only accepted in the
#: older format, ``{"providers": {...}}`` and nothing else.
FORMAT = 'virt-capabilities-ownership/1'
FORMAT_KEY = 'format'
#: How much of the ignored content one warning names.
_MAX_NAMED = 10
_MAX_CHARS = 80
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


def _short(value):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _MAX_CHARS else text[:_MAX_CHARS] + '...'


def _refuse(path, why):
    return exceptions.ConfigError(
        'state file %s is not this reporter\'s ownership state (%s): it '
        'must be missing, or a JSON object with "%s": "%s" (or only '
        '"providers", from older versions); point [virt_capabilities] '
        'state_file elsewhere, or move the file away'
        % (path, why, FORMAT_KEY, FORMAT))


def read_document(path):
    """The state file at ``path`` as a dict, its entries unchecked.

    None when there is no file. ConfigError (the file is left alone) when
    it cannot be read or is not the reporter's own: neither a JSON object
    with ``"format": FORMAT`` nor the older ``{"providers": {...}}``. The
    file's contents are never quoted: it may be anything.
    """
    if not path:
        return None
    try:
        with open(path, 'rb') as f:
            raw = f.read()
    except (FileNotFoundError, NotADirectoryError):
        # No such file (nothing to lose); whether one can be made there is
        # for the first write to say (StateNotSaved).
        return None
    except OSError as exc:
        raise exceptions.ConfigError(
            'cannot read state file %s (%s): it must be missing or this '
            'reporter\'s own, readable JSON file' % (path,
                                                       exc.strerror or exc))
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError:
        raise _refuse(path, 'not UTF-8 text')
    try:
        data = json.loads(text)
    except ValueError:
        raise _refuse(path, 'not JSON')
    if not isinstance(data, dict):
        raise _refuse(path, 'JSON, but not an object')
    if FORMAT_KEY in data:
        if data[FORMAT_KEY] != FORMAT:
            raise _refuse(path, 'another format, perhaps of a newer '
                                'version')
        return data
    if set(data) == {'providers'} and isinstance(data['providers'], dict):
        return data  # written before the format marker
    raise _refuse(path, 'a JSON object without "%s"' % FORMAT_KEY)


def check(path):
    """Raise ConfigError unless ``path`` is missing or the reporter's own
    state file (what ``OwnershipState(path)`` refuses), reading only."""
    read_document(path)


def _parse(path, document):
    """{uuid: frozenset of the names some reporter may have set}: CUSTOM_*
    names and image-metadata traits of any driver (another reporter
    sharing the file may be of another driver). Everything else is warned
    about, once, and left out (and never owned)."""
    if document is None:
        return {}
    providers = document.get('providers', {})
    if not isinstance(providers, dict):
        LOG.warning('ownership state %s: ignored "providers" (%s, not an '
                    'object): no custom trait is known to be ours',
                    path, type(providers).__name__)
        return {}
    owned, ignored = {}, []
    for uuid, traits in providers.items():
        if not isinstance(traits, list):
            ignored.append('%s: %s, not a list' % (
                _short(uuid), type(traits).__name__))
            continue
        good = frozenset(t for t in traits if _recordable(t))
        bad = [t for t in traits if not _recordable(t)]
        if bad:
            ignored.append('%s: %s' % (_short(uuid), ', '.join(
                _short(t) for t in bad)))
        if good:
            owned[uuid] = good
    if ignored:
        more = len(ignored) - _MAX_NAMED
        LOG.warning('ownership state %s: ignored %s%s (only lists of '
                    'CUSTOM_* trait names, and of image-metadata traits, '
                    'are kept; any other standard trait is never the '
                    'reporter\'s to remove)', path,
                    '; '.join(ignored[:_MAX_NAMED]),
                    ' and %d more' % more if more > 0 else '')
    return owned


def _recordable(trait):
    """What some reporter, of any driver, may have set and recorded."""
    return _allowed(trait, metadata_traits.ALL_TRAITS)


def _allowed(trait, standard):
    return trait_names.is_custom(trait) or (isinstance(trait, str)
                                            and trait in standard)


class OwnershipState:
    """``standard``: the standard traits it may own (this node's driver's
    image-metadata traits); any other is never owned, whatever the file
    says."""

    def __init__(self, path, standard=frozenset(), sleep=time.sleep,
                 clock=time.monotonic):
        self.path = path
        self.standard = frozenset(standard)
        self._sleep = sleep
        self._clock = clock
        # What every reporter sharing the file recorded, when it was read;
        # only the entries of the providers this one syncs are used.
        self._owned = _parse(path, read_document(path))

    def owned(self, uuid):
        return frozenset(t for t in self._owned.get(uuid, ())
                         if _allowed(t, self.standard))

    def all_owned(self, uuids=None):
        """What it owns on ``uuids`` (default: every provider recorded)."""
        uuids = self._owned if uuids is None else uuids
        return frozenset().union(*(self.owned(u) for u in uuids))

    def adopt(self, other):
        """Also own what ``other`` (a previous job's state) owned.

        What this process set stays known across a configuration reload,
        also when nothing is kept on disk. Nothing is written here: the
        next ``record`` does it.
        """
        if other is None or other is self:
            return
        for uuid in other._owned:
            traits = other.owned(uuid)
            if traits:
                self._owned[uuid] = self._owned.get(uuid, frozenset()) | \
                    traits

    def prepare(self):
        """Make sure a record can be saved, before anything is sent:
        StateNotSaved (naming the file) if its directory or lock file
        cannot be made. Nothing else is written."""
        if not self.path:
            return
        with self._locked():
            pass

    def record(self, uuid, custom_traits):
        self.record_many([uuid], custom_traits)

    def record_many(self, uuids, custom_traits):
        """Set what we own on these providers; one file write at most.

        ``custom_traits``: the custom traits set, and the image-metadata
        ones (of ``standard``); any other standard trait is left out."""
        self.record_each({uuid: custom_traits for uuid in uuids})

    def record_each(self, traits_by_uuid):
        """``record_many`` with each provider's own set; only these
        providers' entries change, in memory and in the file.
        StateNotSaved when the file cannot be written."""
        changes = {}
        for uuid, traits in traits_by_uuid.items():
            traits = frozenset(t for t in traits
                               if _allowed(t, self.standard))
            if self._owned.get(uuid, frozenset()) != traits:
                changes[uuid] = traits
        if not changes:
            return
        if self.path:
            self._save(changes)
        for uuid, traits in changes.items():
            if traits:
                self._owned[uuid] = traits
            else:
                self._owned.pop(uuid, None)

    # -- the file ---------------------------------------------------------

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

    def _save(self, changes):
        """Read the file again under the lock, change only ``changes``'
        entries, write it back atomically; StateNotSaved if it cannot."""
        directory = os.path.dirname(os.path.abspath(self.path))
        with self._locked():
            try:
                # It may have changed (another reporter) or been replaced
                # since it was read: what is there now is what is kept.
                document = read_document(self.path) or {}
            except exceptions.ConfigError as exc:
                raise self._failed(exc) from exc
            providers = document.get('providers')
            # A "providers" that is not an object was warned about and
            # holds nobody's records.
            providers = dict(providers) if isinstance(providers,
                                                      dict) else {}
            for uuid, traits in changes.items():
                if traits:
                    providers[uuid] = sorted(traits)
                else:
                    providers.pop(uuid, None)
            data = {FORMAT_KEY: FORMAT,
                    'providers': dict(sorted(providers.items()))}
            tmp = None
            try:
                try:
                    mode = stat.S_IMODE(os.stat(self.path).st_mode)
                except FileNotFoundError:
                    mode = None  # a new file: mkstemp's 0600
                fd, tmp = tempfile.mkstemp(dir=directory,
                                           prefix='.ownership-')
                with os.fdopen(fd, 'w') as f:
                    if mode is not None:
                        os.fchmod(f.fileno(), mode)
                    json.dump(data, f, indent=1)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.path)
                tmp = None
                _fsync_directory(directory)
            except OSError as exc:
                raise self._failed(exc.strerror or exc) from exc
            finally:
                if tmp is not None:  # failed or interrupted: no stray file
                    os.unlink(tmp)


def _fsync_directory(directory):
    """Make a rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
