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

"""Find the resource providers a node reports for, as nova-compute names them
(``default_refs``), and wait for them (``wait_for``)."""

import dataclasses
import itertools
import logging
import os
import socket
import time
import uuid as uuid_lib

from image_type_common import exceptions
from virt_capabilities.conf import reporter as reporter_conf

LOG = logging.getLogger(__name__)

COMPUTE_ID_FILE = 'compute_id'
MAX_NAME_LENGTH = 200  # Placement's limit on provider names
#: From this many providers on, the reporter asks Placement in one query
#: which are in sync already, rather than reading each.
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


def libvirt_hostname():
    """The name nova-compute's libvirt driver names its node (and
    provider) after, libvirt's ``getHostname()``, worked out here without
    asking libvirt: this machine's host name if it is fully qualified (or
    localhost), else its canonical name when it resolves (libvirt's
    virGetHostname rule)."""
    name = socket.gethostname()
    if '.' in name or name.startswith('localhost'):
        return name
    try:
        canonical = socket.getaddrinfo(name, None,
                                       flags=socket.AI_CANONNAME)[0][3]
    except (OSError, IndexError):
        return name
    return name if not canonical or canonical.startswith('localhost') \
        else canonical


class ProviderNeeded(exceptions.ConfigError):
    """This driver's provider cannot be found from nova.conf alone."""


def read_compute_id(locations):
    """The node uuid nova-compute would read from ``locations``, or None
    when no ``compute_id`` file is there.

    Refused (ConfigError) where nova-compute refuses to start
    (nova/virt/node.py:59-86): a file that does not parse as a uuid once
    stripped, empty included (it reads the first 40 characters), or files
    that disagree. Canonical form, as Nova writes it.
    """
    found = []
    for location in locations:
        path = os.path.join(location, COMPUTE_ID_FILE)
        try:
            with open(path) as f:
                node_uuid = str(uuid_lib.UUID(f.read(40).strip()))
        except FileNotFoundError:
            continue
        except ValueError:  # UnicodeDecodeError too, as for Nova
            raise exceptions.ConfigError(
                '%s does not hold a uuid; nova-compute refuses to start '
                'with it (write the node\'s uuid there, or remove the file '
                'if nova-compute never ran)' % path)
        except OSError as exc:
            raise exceptions.ConfigError('cannot read %s: %s' % (
                path, exc.strerror or exc))
        if found and node_uuid != found[0][0]:
            raise exceptions.ConfigError(
                'uuid %s in %s does not match %s in %s; nova-compute '
                'refuses to start with both' % (node_uuid, path,
                                                 *found[0]))
        found.append((node_uuid, path))
    return found[0] if found else None


def default_refs(settings, driver, config_files=()):
    """The provider nova-compute itself uses for this node.

    First the uuid in its ``compute_id`` file (nova-compute writes it since
    2023.1), found where nova-compute finds it: beside ``config_files``,
    then under ``state_path``; then the node name as ``driver`` (its
    ``drivers.Driver`` record) says nova-compute makes it; for drivers
    whose node name only the hypervisor knows, ProviderNeeded.
    """
    # nova-compute's order (Nova 34's nova/virt/node.py:54-55,
    # read_local_node_uuid): config dirs are not among the places.
    found = read_compute_id([os.path.dirname(f) for f in config_files]
                            + ([settings.state_path] if settings.state_path
                               else []))
    if found:
        node_uuid, path = found
        return [ProviderRef(node_uuid, 'compute_id file %s' % path)]
    if driver.node_name is not None:
        return [validate(driver.node_name(settings),
                         driver.node_name_source)]
    raise ProviderNeeded(
        'give --provider NAME_OR_UUID: %s cannot find its provider from '
        'nova.conf (%s)' % (driver.name, driver.named_by_hypervisor
                            or 'no compute_id file'))


def resolve(client, refs):
    """Map refs to provider uuids: (uuids in ref order, missing refs)."""
    uuids, missing = [], []
    for ref in refs:
        found = []
        if ref.is_uuid:
            found = client.list_resource_providers(uuid=ref.value.lower())
        if not found:
            found = client.list_resource_providers(name=ref.value)
        if found:
            uuids.append(found[0]['uuid'])
        else:
            missing.append(ref)
    return uuids, missing


def missing_line(kind, refs):
    """What was not found: ``no resource provider found for ...``, or
    ``no Ironic node found for ...`` (``kind``: the trait store's)."""
    what = '; '.join(ref.describe() for ref in refs)
    if kind == 'provider':
        return 'no resource provider found for %s' % what
    return 'no %s found for %s' % (kind, what)


def wait_for(lookup, refs, kind='provider', wait=0.0, sleep=time.sleep,
             clock=time.monotonic,
             unavailable=exceptions.PlacementUnavailable):
    """``lookup(refs)``'s (uuids in ref order, missing refs), asked again
    with back-off, up to ``wait`` seconds, while refs are missing or the
    service is ``unavailable`` (one warning an attempt): nova-compute may
    not have created them yet at start-up. At the deadline: what was found
    with what was not, or the service's last error."""
    deadline = clock() + wait
    for attempt in itertools.count():
        try:
            uuids, missing = lookup(refs)
            if not missing or clock() >= deadline:
                return uuids, missing
            problem = missing_line(kind, missing)
        except unavailable as exc:
            if clock() < deadline:
                problem = exc
            elif wait > 0:
                raise type(exc)('%s (waited %.0f s)' % (exc, wait)) from exc
            else:
                raise
        # Jittered, so nodes restarted together do not retry in step.
        delay = reporter_conf.PROVIDER_WAIT_BACKOFF.delay(
            attempt, cap=max(deadline - clock(), 0))
        LOG.warning('%s; retrying in %.1f s', problem, delay)
        sleep(delay)


def resolve_with_wait(client, refs, wait=0.0, sleep=time.sleep,
                      clock=time.monotonic):
    """Placement's providers of ``refs`` (``resolve``), waited for as
    ``wait_for`` says; if none was found, ProviderNotFound naming what
    was looked for."""
    uuids, missing = wait_for(lambda refs: resolve(client, refs), refs,
                              wait=wait, sleep=sleep, clock=clock)
    if missing and not uuids:
        raise exceptions.ProviderNotFound('%s%s' % (
            missing_line('provider', missing),
            ' (waited %.0f s)' % wait if wait > 0 else ''))
    return uuids, missing
