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
  the other entries are kept;
* it is written atomically and durably (temp file fsynced, renamed, the
  directory fsynced), only when it changes; a new file is private (0600), a
  replaced one keeps its mode.

With no path it lives in memory only, for the life of the process (a
service's reload hands it to the re-read job: see ``adopt``).
"""

import json
import logging
import os
import stat
import tempfile

from image_type_common import exceptions
from image_type_common import trait_names

LOG = logging.getLogger(__name__)

#: Written into every state file; a file without it is only accepted in the
#: older format, ``{"providers": {...}}`` and nothing else.
FORMAT = 'virt-capabilities-ownership/1'
FORMAT_KEY = 'format'
#: How much of the ignored content one warning names.
_MAX_NAMED = 10
_MAX_CHARS = 80


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
    except FileNotFoundError:
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


def _parse(path, document, standard=frozenset()):
    """{uuid: frozenset of CUSTOM_* names and ``standard`` names};
    everything else is warned about, once, and left out."""
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
        good = frozenset(t for t in traits if _allowed(t, standard))
        bad = [t for t in traits if not _allowed(t, standard)]
        if bad:
            ignored.append('%s: %s' % (_short(uuid), ', '.join(
                _short(t) for t in bad)))
        if good:
            owned[uuid] = good
    if ignored:
        more = len(ignored) - _MAX_NAMED
        LOG.warning('ownership state %s: ignored %s%s (only lists of '
                    'CUSTOM_* trait names, and of this driver\'s '
                    'image-metadata traits, are kept; any other standard '
                    'trait is never the reporter\'s to remove)', path,
                    '; '.join(ignored[:_MAX_NAMED]),
                    ' and %d more' % more if more > 0 else '')
    return owned


def _allowed(trait, standard):
    return trait_names.is_custom(trait) or (isinstance(trait, str)
                                            and trait in standard)


class OwnershipState:
    """``standard``: the standard traits it may remember (this node's
    driver's image-metadata traits); any other is never read."""

    def __init__(self, path, standard=frozenset()):
        self.path = path
        self.standard = frozenset(standard)
        self._owned = _parse(path, read_document(path), self.standard)

    def owned(self, uuid):
        return self._owned.get(uuid, frozenset())

    def all_owned(self):
        return frozenset().union(*self._owned.values())

    def adopt(self, other):
        """Also own what ``other`` (a previous job's state) owned.

        What this process set stays known across a configuration reload,
        also when nothing is kept on disk. Nothing is written here: the
        next ``record`` does it.
        """
        if other is None or other is self:
            return
        for uuid, traits in other._owned.items():
            traits = frozenset(t for t in traits
                               if _allowed(t, self.standard))
            if traits:
                self._owned[uuid] = self.owned(uuid) | traits

    def record(self, uuid, custom_traits):
        self.record_many([uuid], custom_traits)

    def record_many(self, uuids, custom_traits):
        """Set what we own on these providers; one file write at most.

        ``custom_traits``: the custom traits set, and the image-metadata
        ones (of ``standard``); any other standard trait is left out."""
        self.record_each({uuid: custom_traits for uuid in uuids})

    def record_each(self, traits_by_uuid):
        """``record_many`` with each provider's own set."""
        changed = False
        for uuid, traits in traits_by_uuid.items():
            traits = frozenset(t for t in traits
                               if _allowed(t, self.standard))
            if self._owned.get(uuid, frozenset()) == traits:
                continue
            changed = True
            if traits:
                self._owned[uuid] = traits
            else:
                self._owned.pop(uuid, None)
        if changed:
            self._save()

    def _save(self):
        if not self.path:
            return
        data = {FORMAT_KEY: FORMAT,
                'providers': {u: sorted(t) for u, t in
                              sorted(self._owned.items())}}
        directory = os.path.dirname(os.path.abspath(self.path))
        tmp = None
        try:
            check(self.path)  # it may have been replaced since it was read
            os.makedirs(directory, exist_ok=True)
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
        except (OSError, exceptions.ConfigError) as exc:
            LOG.warning('could not save ownership state %s: %s',
                        self.path, exc)
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
