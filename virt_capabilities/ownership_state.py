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

"""Remembers which custom traits each reporter set on which provider.

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
``state_path`` for a fleet, nodes of different drivers; or one
``state_file`` on purpose, two reporters of one provider). Each reporter has
a name (``[virt_capabilities] reporter_name``, by default the configuration
files and directories it reads: see ``NodePlan.reporter_name``), and the
file keeps one record per provider and reporter::

    {"format": "virt-capabilities-ownership/2",
     "providers": {"<provider uuid>": {"<reporter name>": ["CUSTOM_A"]}},
     "unclaimed": {"<provider uuid>": ["CUSTOM_B"]}}

A reporter only ever writes its own name's records (and claims an unclaimed
one, below); every other reporter's are kept as they are, whatever they
hold, never judged by this one's driver. A trait in another reporter's
record of the same provider is never removed by this one: a trait two
reporters set stays while either still records it (``others``).

The name is the configuration files because that is what makes two
reporters of one provider different (their ``[DEFAULT] host`` and driver
are the node's, the same for both), while a service, its SIGHUP re-read and
a one-shot ``report`` of the same files are one reporter. A reporter started
with other files is another reporter: it does not inherit the old name's
records (these keep protecting their traits), so ``reporter_name`` is there
to keep a name when the files move.

Older files (format 1, ``"format": "virt-capabilities-ownership/1"``, and
the format before it, ``{"providers": {...}}`` alone) kept one list per
provider and no owner: that list was whatever the last reporter of the
provider recorded. They are read without losing a record: each list
becomes that provider's ``unclaimed`` record, which the first reporter to
sync the provider claims as its own (it then removes what it no longer
sets, and the file keeps only its record). With one reporter per provider,
the case of every deployment before format 2, that is exactly the old
behaviour. It never widens what a reporter may remove: under format 1
every reader owned the whole list, now only the first one does, and never a
trait another reporter's format-2 record holds. Format 2 carries a new
marker, so a reporter of format 1 refuses such a file (exit 2, the file
untouched) rather than misreading it.

Each write is a read-modify-write of the file under an exclusive lock
(``.<name>.lock`` beside it), so two reporters writing at once lose
neither's records; each sync also re-reads the others' records
(``refresh``), so one written since this reporter started is honoured. The
file is written atomically and durably (temp file fsynced, renamed, the
directory fsynced), only when it changes; a new file is private (0600), a
replaced one keeps its mode. A state that cannot be saved is
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

#: Written into every state file: one record per provider and reporter.
FORMAT = 'virt-capabilities-ownership/2'
#: The formats it still reads (one unowned list per provider); a file with
#: no marker is only accepted in the oldest, ``{"providers": {...}}`` alone.
OLDER_FORMATS = ('virt-capabilities-ownership/1',)
FORMAT_KEY = 'format'
#: The name a library caller's state (one reporter) records under.
DEFAULT_NAME = 'virt-capabilities'
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
        'must be missing, or a JSON object with "%s": "%s" (or an older '
        'version\'s: "%s", or only "providers"); point '
        '[virt_capabilities] state_file elsewhere, or move the file away'
        % (path, why, FORMAT_KEY, FORMAT, '", "'.join(OLDER_FORMATS)))


def read_document(path):
    """The state file at ``path`` as a dict, its entries unchecked.

    None when there is no file. ConfigError (the file is left alone) when
    it cannot be read or is not the reporter's own: neither a JSON object
    with ``"format": FORMAT`` (or one of ``OLDER_FORMATS``) nor the oldest
    ``{"providers": {...}}``. The file's contents are never quoted: it may
    be anything.
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
        if data[FORMAT_KEY] != FORMAT and data[FORMAT_KEY] not in \
                OLDER_FORMATS:
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


def _records(document):
    """(providers, unclaimed, problems) of a document read from the file.

    ``providers``: {uuid: {reporter name: record}}, ``unclaimed``:
    {uuid: record}, both raw, as the file has them (what another reporter
    writes keeps them so); ``problems``: what is of the wrong shape. An
    older format's lists are all unclaimed.
    """
    if document is None:
        return {}, {}, []
    problems = []
    if document.get(FORMAT_KEY) != FORMAT:
        return {}, _object(document, 'providers', problems), problems
    providers = _object(document, 'providers', problems)
    for uuid, entry in providers.items():
        if not isinstance(entry, dict):
            problems.append('%s: %s, not an object of reporters' % (
                _short(uuid), type(entry).__name__))
    return providers, _object(document, 'unclaimed', problems), problems


def _object(document, key, problems):
    value = document.get(key, {})
    if isinstance(value, dict):
        return value
    problems.append('"%s" (%s, not an object)' % (key, type(value).__name__))
    return {}


def _recorded(where, value, problems):
    """The traits some reporter may have set, in one raw record."""
    if not isinstance(value, list):
        problems.append('%s: %s, not a list' % (where,
                                                type(value).__name__))
        return frozenset()
    bad = [t for t in value if not _recordable(t)]
    if bad:
        problems.append('%s: %s' % (where, ', '.join(_short(t)
                                                       for t in bad)))
    return frozenset(t for t in value if _recordable(t))


def _recordable(trait):
    """What some reporter, of any driver, may have set and recorded."""
    return _allowed(trait, metadata_traits.ALL_TRAITS)


def _allowed(trait, standard):
    return trait_names.is_custom(trait) or (isinstance(trait, str)
                                            and trait in standard)


class OwnershipState:
    """One reporter's view of the state: its own records, the other
    reporters' and the unclaimed ones, by provider.

    ``name``: the reporter's name in the file. ``standard``: the standard
    traits it may own (this node's driver's image-metadata traits); any
    other is never owned, whatever the file says.
    """

    def __init__(self, path, standard=frozenset(), sleep=time.sleep,
                 clock=time.monotonic, name=DEFAULT_NAME):
        self.path = path
        self.name = name
        self.standard = frozenset(standard)
        self._sleep = sleep
        self._clock = clock
        self._warned = None
        # This reporter's records: read once, then changed only by its own
        # writes (another process of the same name is the same reporter).
        self._own = {}
        self._others = {}     # {uuid: what the other reporters recorded}
        self._unclaimed = {}  # {uuid: an older format's list}
        self._load(read_document(path), own=True)

    def _load(self, document, own=False):
        """Take the others' and the unclaimed records from ``document``
        (and its own, when ``own``); warn of what is of the wrong shape,
        once for as long as it stays the same."""
        providers, unclaimed, problems = _records(document)
        others = {}
        for uuid, entry in providers.items():
            if not isinstance(entry, dict):
                continue  # a problem already
            for name, value in entry.items():
                traits = _recorded('%s (%s)' % (_short(uuid), _short(name)),
                                   value, problems)
                if name == self.name:
                    if own and traits:
                        self._own[uuid] = traits
                elif traits:
                    others[uuid] = others.get(uuid, frozenset()) | traits
        self._others = others
        self._unclaimed = {}
        for uuid, value in unclaimed.items():
            traits = _recorded(_short(uuid), value, problems)
            if traits:
                self._unclaimed[uuid] = traits
        self._warn(problems)

    def _warn(self, problems):
        if not problems or problems == self._warned:
            self._warned = problems or None
            return
        self._warned = problems
        more = len(problems) - _MAX_NAMED
        LOG.warning('ownership state %s: ignored %s%s (only lists of '
                    'CUSTOM_* trait names, and of image-metadata traits, '
                    'are kept; any other standard trait is never the '
                    'reporter\'s to remove)', self.path,
                    '; '.join(problems[:_MAX_NAMED]),
                    ' and %d more' % more if more > 0 else '')

    def refresh(self):
        """Read the other reporters' records again (they may have written
        since): before each sync. ConfigError if the file is no longer
        the reporter's own."""
        if self.path:
            self._load(read_document(self.path))

    def owned(self, uuid):
        """What it may remove on ``uuid``: its own record, and an
        unclaimed one it will claim by its next write."""
        return frozenset(
            t for t in self._own.get(uuid, frozenset()) |
            self._unclaimed.get(uuid, frozenset())
            if _allowed(t, self.standard))

    def others(self, uuid):
        """What the other reporters recorded on ``uuid``: never this one's
        to remove, even where its own record holds it too."""
        return self._others.get(uuid, frozenset())

    def all_owned(self, uuids=None):
        """What it owns on ``uuids`` (default: every provider recorded)."""
        if uuids is None:
            uuids = set(self._own) | set(self._unclaimed)
        return frozenset().union(*(self.owned(u) for u in uuids))

    def adopt(self, other):
        """Also own what ``other`` (a previous job's state) owned.

        What this process set stays known across a configuration reload,
        also when nothing is kept on disk. Nothing is written here: the
        next ``record`` does it. A state of another name, kept in a file,
        is another reporter's: its records stay its own.
        """
        if other is None or other is self or (
                self.path and other.path and other.name != self.name):
            return
        for uuid in set(other._own) | set(other._unclaimed):
            traits = other.owned(uuid)
            if traits:
                self._own[uuid] = self._own.get(uuid, frozenset()) | traits

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
        """``record_many`` with each provider's own set; only this
        reporter's records of these providers change (an unclaimed one is
        claimed), in memory and in the file. StateNotSaved when the file
        cannot be written."""
        changes = {}
        for uuid, traits in traits_by_uuid.items():
            traits = frozenset(t for t in traits
                               if _allowed(t, self.standard))
            if (self._own.get(uuid, frozenset()) != traits
                    or uuid in self._unclaimed):
                changes[uuid] = traits
        if not changes:
            return
        if self.path:
            self._save(changes)
        for uuid, traits in changes.items():
            self._unclaimed.pop(uuid, None)
            if traits:
                self._own[uuid] = traits
            else:
                self._own.pop(uuid, None)

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
        """Read the file again under the lock, change only this reporter's
        records of ``changes``' providers (claiming their unclaimed ones),
        write it back atomically; StateNotSaved if it cannot."""
        directory = os.path.dirname(os.path.abspath(self.path))
        with self._locked():
            try:
                # It may have changed (another reporter) or been replaced
                # since it was read: what is there now is what is kept.
                document = read_document(self.path)
            except exceptions.ConfigError as exc:
                raise self._failed(exc) from exc
            # Every other reporter's record is kept as the file has it.
            records, unclaimed, _ = _records(document)
            records, unclaimed = dict(records), dict(unclaimed)
            for uuid, traits in changes.items():
                entry = records.get(uuid)
                # One of the wrong shape was warned about and holds
                # nobody's records: this reporter's replaces it.
                entry = dict(entry) if isinstance(entry, dict) else {}
                if traits:
                    entry[self.name] = sorted(traits)
                else:
                    entry.pop(self.name, None)
                if entry:
                    records[uuid] = dict(sorted(entry.items()))
                else:
                    records.pop(uuid, None)
                unclaimed.pop(uuid, None)
            data = {FORMAT_KEY: FORMAT,
                    'providers': dict(sorted(records.items()))}
            if unclaimed:
                data['unclaimed'] = dict(sorted(unclaimed.items()))
            self._write(directory, data)
            # What the others recorded, as fresh as it gets.
            self._load(data)

    def _write(self, directory, data):
        tmp = None
        try:
            try:
                mode = stat.S_IMODE(os.stat(self.path).st_mode)
            except FileNotFoundError:
                mode = None  # a new file: mkstemp's 0600
            fd, tmp = tempfile.mkstemp(dir=directory, prefix='.ownership-')
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
