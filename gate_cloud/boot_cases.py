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

"""What each boot of an upgrade or a rollback must end in, and the checks.

A case is an image and where its boots may end: a format some untagged
host boots lands only on a host that reports it; an image requiring the
reserved trait lands only on the reserved host; a format no host boots
ends in ERROR with a fault naming the format. The hosts come from
cloud.json (the traits Placement held when the cloud came up), never from
the filters under test.

``queries(server_id)`` reads the ``GET /allocation_candidates`` requests a
boot made Placement answer, from Placement's own log, by the global
request id nova-api gave the boot: the proof of which mechanism (ours or
Nova's) put a trait or an aggregate into the query. ``why`` reads, by the
same id, what nova-conductor, nova-scheduler and Placement said of a boot
that ended wrong, so that the gate's one failure line carries the cause.
"""

import dataclasses
import time
import urllib.parse

from gate_cloud import boots
from gate_cloud import layout
from gate_cloud import rest
from gate_cloud.processes import GateError

#: The format no host of the cloud boots (its boots must fail, naming it).
UNBOOTABLE = 'vmdk'
#: Nova's RequestFilterFailed message: a request filter refused the boot.
#: On a boot that some host can take, that is a failure the filters caused.
FILTER_REFUSAL = 'Scheduling failed:'
#: Placement's log of every request (oslo.log's file).
PLACEMENT_LOG = 'placement-app.log'
#: The Nova logs a boot's request id runs through after nova-api.
NOVA_LOGS = ('nova-conductor-app.log', 'nova-scheduler-app.log')
#: DEBUG lines of Nova's that say where a boot's hosts went: a host filter
#: that removed every host, a claim that failed.
DECISIVE_DEBUG = ('returned 0 host', 'Filtered []', 'Unable to',
                  'out of retries', 'claim')
#: Where ``why`` writes each wrong boot's whole story.
FAILED_BOOTS_LOG = 'failed-boots.log'
#: How many of a story's lines the failure line carries.
WHY_LINES = 4


@dataclasses.dataclass(frozen=True)
class Case:
    """One kind of boot and what it must end in."""

    label: str
    image: str
    #: Hosts it may land on; empty: it must end in ERROR.
    hosts: frozenset
    #: For a case that must fail: what its fault must name.
    fault_names: tuple = ()

    @property
    def must_fail(self):
        return not self.hosts


@dataclasses.dataclass
class Boot:
    """One boot: when it ran (epoch seconds), how it ended."""

    case: str
    started: float
    ended: float = 0.0
    server_id: str = None
    status: str = None
    host: str = None
    fault: str = ''
    error: str = ''
    #: nova-api's request id of a boot that ended wrong (read before its
    #: server is deleted), for ``why``.
    request_id: str = None

    def as_dict(self):
        return dataclasses.asdict(self)


def untagged_hosts(cloud, fmt):
    """The hosts an untagged ``fmt`` boot may land on: they report the
    format and carry no reserved trait."""
    return frozenset(c['host'] for c in cloud['computes']
                     if fmt in c['image_types'] and not c['custom_traits'])


def reserved_hosts(cloud):
    return frozenset(c['host'] for c in cloud['computes']
                     if cloud['reserved_trait'] in c['custom_traits'])


def bootable_formats(cloud):
    """The formats of the cloud's image files some untagged host boots."""
    return sorted(f for f in cloud['image_files']
                  if untagged_hosts(cloud, f))


def make(admin, cloud, prefix):
    """Upload the images and return the cases, in the order a stream
    rotates through them: each bootable format, the reserved trait, the
    format nobody boots."""
    out = []
    for fmt in bootable_formats(cloud):
        out.append(Case(fmt, boots.upload_image(
            admin, '%s-%s' % (prefix, fmt), fmt, cloud['image_files'][fmt]),
            untagged_hosts(cloud, fmt)))
    reserved = reserved_hosts(cloud)
    raw_reserved = [c for c in cloud['computes'] if c['host'] in reserved
                    and 'raw' in c['image_types']]
    if raw_reserved:
        trait = cloud['reserved_trait']
        out.append(Case('reserved', boots.upload_image(
            admin, '%s-reserved' % prefix, 'raw', cloud['image_files']['raw'],
            {'trait:%s' % trait: 'required'}), frozenset(reserved)))
    if UNBOOTABLE in cloud['image_files'] and not any(
            UNBOOTABLE in c['image_types'] for c in cloud['computes']):
        out.append(Case(UNBOOTABLE, boots.upload_image(
            admin, '%s-%s' % (prefix, UNBOOTABLE), UNBOOTABLE,
            cloud['image_files'][UNBOOTABLE]), frozenset(),
            (UNBOOTABLE,)))
    return out


def judge(case, boot):
    """'ok', or why the boot is wrong: 'wrong-host' (it landed where the
    image cannot boot), 'filter-refusal' (a request filter refused a boot
    some host can take), 'failed' (anything else: whether a restart
    excuses it is the caller's to say)."""
    if case.must_fail:
        if boot.status == 'ERROR' and all(
                name in boot.fault for name in case.fault_names):
            return 'ok'
        if boot.status == 'ACTIVE':
            return 'wrong-host'
        return 'failed'
    if boot.status == 'ACTIVE':
        return 'ok' if boot.host in case.hosts else 'wrong-host'
    if boot.status == 'ERROR' and FILTER_REFUSAL in boot.fault:
        return 'filter-refusal'
    return 'failed'


def boot_once(client, case, name, delete=True):
    """Boot ``case`` once; every error becomes part of the record."""
    record = Boot(case.label, time.time())
    try:
        record.server_id = boots.create(client, name, case.image)
        server = boots.wait(client, record.server_id)
        record.status = server['status']
        record.host = boots.host_of(server)
        record.fault = (server.get('fault') or {}).get('message', '')
    except Exception as exc:  # an outage may cost a boot: recorded
        record.error = ('%s: %s' % (type(exc).__name__, exc))[:300]
    record.ended = time.time()
    if record.server_id and judge(case, record) != 'ok':
        try:
            record.request_id = request_id(client, record.server_id)
        except GateError:  # the record stands; only ``why`` goes without
            record.request_id = None
    if delete and record.server_id:
        try:
            boots.delete(client, record.server_id)
        except GateError as exc:
            record.error = record.error or 'delete: %s' % str(exc)[:200]
    return record


def request_id(client, server_id):
    """The global request id nova-api gave a server's create."""
    actions = client.get(boots.server_url(server_id) + '/os-instance-actions',
                         headers=rest.COMPUTE_HEADERS)['instanceActions']
    for action in actions:
        if action['action'] == 'create':
            return action['request_id']
    raise GateError('server %s has no create action' % server_id)


def queries(global_id, log=None):
    """Each allocation-candidate query Placement logged for one request
    id: a list of {parameter: [values]} (trait lists split at commas)."""
    out = []
    path = log or layout.path('logs', PLACEMENT_LOG)
    marker = '[%s ' % global_id
    with open(path, errors='replace') as f:
        for line in f:
            if marker not in line or '/allocation_candidates?' not in line:
                continue
            query = line.split('/allocation_candidates?', 1)[1].split(
                ' ', 1)[0].rstrip('"')
            parsed = {}
            for key, values in urllib.parse.parse_qs(query).items():
                # A member_of value is one 'in:'/'!in:' list, kept whole.
                parsed[key] = values if key == 'member_of' else [
                    part for value in values for part in value.split(',')]
            out.append(parsed)
    return out


def _said(line):
    """(level, message) of one oslo.log line, or None."""
    parts = line.split(' ', 5)
    if len(parts) < 6 or parts[3] not in ('DEBUG', 'INFO', 'WARNING',
                                          'ERROR', 'CRITICAL'):
        return None
    message = parts[5].split('] ', 1)[-1].strip()
    return parts[3], message


def why(global_id, logs_dir=None):
    """What nova-conductor, nova-scheduler and Placement said of one boot
    (its request id): each WARNING or worse, Nova's INFO lines and the
    DEBUG lines that say where its hosts went, and every Placement answer
    that was not a success. A list of "log: LEVEL message" strings."""
    where = logs_dir or layout.path('logs')
    marker = ' %s ' % global_id
    out = []
    for name in NOVA_LOGS + (PLACEMENT_LOG,):
        path = where / name
        if not path.exists():
            continue
        with open(path, errors='replace') as f:
            for line in f:
                if marker not in line and '[%s ' % global_id not in line:
                    continue
                said = _said(line)
                if said is None:
                    continue
                level, message = said
                if name == PLACEMENT_LOG:
                    keep = ' status: 2' not in message
                else:
                    keep = level != 'DEBUG' or any(
                        word in message for word in DECISIVE_DEBUG)
                if keep:
                    out.append('%s: %s %s' % (name.replace('-app.log', ''),
                                              level, message[:300]))
    return out


def failure(label, case, record, verdict, global_id=None):
    """The one line that says a boot ended wrong, and why where the logs
    say it (the whole story appended to logs/failed-boots.log)."""
    line = '%s: a %s boot %s (%s)' % (
        label, case.label, describe(case, record, verdict),
        record.error or record.fault or record.status)
    if not global_id:
        return line
    story = why(global_id)
    path = layout.path('logs', FAILED_BOOTS_LOG)
    with open(path, 'a') as f:
        f.write('%s %s\n%s\n\n' % (global_id, line, '\n'.join(story)))
    if not story:
        return '%s; no Nova or Placement line on %s' % (line, global_id)
    return '%s; %s said: %s (all %d lines in %s)' % (
        line, global_id, ' | '.join(story[:WHY_LINES]), len(story), path)


def probe(client, cases, label, delete=True):
    """One boot of each case, one after the other; each must end as its
    case says (no restart excuses a probe). Returns [(case, boot,
    queries)]; raises naming the first wrong boot."""
    out = []
    for case in cases:
        record = boot_once(client, case, '%s-%s' % (label, case.label),
                           delete=False)
        verdict = judge(case, record)
        found, global_id = [], None
        if record.server_id:
            try:
                global_id = request_id(client, record.server_id)
                found = queries(global_id)
            finally:
                if delete:
                    boots.delete(client, record.server_id)
        if verdict != 'ok':
            raise GateError(failure(label, case, record, verdict, global_id))
        out.append((case, record, found))
    return out


def describe(case, boot, verdict):
    if verdict == 'wrong-host':
        return 'landed on %s, not one of %s' % (boot.host,
                                                sorted(case.hosts) or 'none')
    if verdict == 'filter-refusal':
        return 'was refused by a request filter'
    if case.must_fail:
        return 'did not end in ERROR naming %s' % ', '.join(case.fault_names)
    return 'failed'


def root_required(query):
    """The root_required traits of one parsed query (``!`` forbidden)."""
    return set(query.get('root_required', []))
