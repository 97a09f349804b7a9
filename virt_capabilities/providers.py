"""Find the resource providers a node reports for.

By default the uuid in nova-compute's ``compute_id`` file under ``[DEFAULT]
state_path``, else the name ``[DEFAULT] host`` (the hostname by default).
nova-compute may not have created the provider yet at start-up, so lookups
can wait with back-off.
"""

import dataclasses
import logging
import os
import random
import time
import uuid as uuid_lib

from image_type_common import exceptions
from image_type_common.conf import loading

LOG = logging.getLogger(__name__)

COMPUTE_ID_FILE = 'compute_id'
MAX_NAME_LENGTH = 200  # Placement's limit on provider names
#: From this many providers on, one listing query is cheaper than one
#: request per provider (lookups here, the in-sync query in the reporter).
BULK_THRESHOLD = 4


@dataclasses.dataclass(frozen=True)
class ProviderRef:
    """A provider as the operator named it, and where that name came from."""

    value: str
    source: str

    @property
    def is_uuid(self):
        try:
            return str(uuid_lib.UUID(self.value)) == self.value.lower()
        except ValueError:
            return False

    def describe(self):
        kind = 'uuid' if self.is_uuid else 'name'
        return '%s %r (from %s)' % (kind, self.value, self.source)


def validate(value, source):
    """A provider reference from outside: non-empty, printable, short."""
    value = (value or '').strip()
    if not value:
        raise exceptions.ConfigError('empty provider name from %s' % source)
    if len(value) > MAX_NAME_LENGTH:
        raise exceptions.ConfigError(
            'provider name from %s is longer than %d characters'
            % (source, MAX_NAME_LENGTH))
    if not value.isprintable():
        raise exceptions.ConfigError(
            'provider name from %s has control characters: %r'
            % (source, value))
    return ProviderRef(value, source)


def default_refs(conf):
    """The provider nova-compute itself would use for this node."""
    state_path = loading.read(conf, 'state_path')
    path = os.path.join(state_path, COMPUTE_ID_FILE) if state_path else None
    try:
        with open(path) as f:
            value = f.read().strip()
    except (FileNotFoundError, TypeError):
        value = None
    except OSError as exc:
        raise exceptions.ConfigError('cannot read %s: %s' % (path, exc))
    if value:
        ref = validate(value, 'compute_id file %s' % path)
        if not ref.is_uuid:
            raise exceptions.ConfigError(
                '%s does not hold a uuid: %r' % (path, value))
        return [ref]
    return [validate(loading.read(conf, 'host'), '[DEFAULT] host')]


def resolve(client, refs):
    """Map refs to provider uuids: (uuids in ref order, missing refs)."""
    if len(refs) >= BULK_THRESHOLD:
        everyone = client.list_resource_providers()
        by_uuid = {rp['uuid']: rp['uuid'] for rp in everyone}
        by_name = {rp['name']: rp['uuid'] for rp in everyone}

        def lookup(ref):
            return (by_uuid.get(ref.value.lower()) if ref.is_uuid
                    else None) or by_name.get(ref.value)
    else:
        def lookup(ref):
            found = []
            if ref.is_uuid:
                found = client.list_resource_providers(uuid=ref.value.lower())
            if not found:
                found = client.list_resource_providers(name=ref.value)
            return found[0]['uuid'] if found else None
    uuids, missing = [], []
    for ref in refs:
        found = lookup(ref)
        if found:
            uuids.append(found)
        else:
            missing.append(ref)
    return uuids, missing


def resolve_with_wait(client, refs, wait=0.0, sleep=time.sleep,
                      clock=time.monotonic):
    """Resolve refs, waiting up to ``wait`` seconds for late providers.

    Returns (uuids, missing refs). Placement being unreachable is waited for
    the same way, with one warning per attempt. At the deadline, what was
    found is returned with what was not; if nothing was found, the error
    names what was looked for.
    """
    deadline = clock() + wait
    attempt = 0
    while True:
        try:
            uuids, missing = resolve(client, refs)
            if not missing:
                return uuids, []
            problem = exceptions.ProviderNotFound(
                'no resource provider found for %s'
                % '; '.join(r.describe() for r in missing))
        except exceptions.PlacementUnavailable as exc:
            uuids, problem = [], exc
        remaining = deadline - clock()
        if remaining <= 0:
            if uuids:
                return uuids, missing
            if wait > 0:
                raise type(problem)('%s (waited %.0f s)' % (problem, wait))
            raise problem
        # Jittered, so nodes restarted together do not retry in step.
        delay = min(remaining, 0.5 * (2 ** min(attempt, 5))
                    * random.uniform(0.5, 1.0))
        LOG.warning('%s; retrying in %.1f s', problem, delay)
        sleep(delay)
        attempt += 1
