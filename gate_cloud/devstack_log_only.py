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

"""The roll-out mode on the devstack cloud: ``enforce = False`` changes
nothing.

Run on the node by ``devstack_job`` (``python3 -m
gate_cloud.devstack_log_only``, root). nova-scheduler's nova.conf gets
``[image_type_filter] enforce = False`` (devstack's own ``iniset``) and
its unit is restarted; a raw image (tempest's) and a qcow2 image (a
format no node boots: the filters would refuse it) are booted one at a
time. For each: it ends ACTIVE (the filters changed nothing), the queries
nova-scheduler sent Placement for it (Placement's request log, by the
boot's request id) carry none of this project's traits, no reserved trait
forbidden (``[image_isolation]`` is log-only too) nor what its log-only
line says it would add, and nova-scheduler logged exactly one
log-only line for it (read by the product's own parser,
``read_verdicts``): ``would refuse`` for the qcow2 boot only.
``enforce`` is set back to True and nova-scheduler restarted, pass or
fail.
"""

import dataclasses
import json
import subprocess
import sys

from gate_cloud import GateError
from gate_cloud import devstack_candidates as candidates
from gate_cloud import devstack_node as node

SCHEDULER = 'devstack@n-sch.service'
#: nova-scheduler's line once the filters are loaded (the product's
#: ``image_type_filter.nova.integration``): how a restart is known done.
LOADED = 'image-type-filter request filters added to nova-scheduler'
#: The boots: (label, disk format, whether the filters would refuse it).
BOOTS = (('raw', 'raw', False), ('qcow2', 'qcow2', True))
BOOT_DEADLINE = 180.0
LOAD_DEADLINE = 300.0


#: Trait prefixes only this project's filters add to a query (Nova's own
#: image-type and image-metadata prefilters are off in the gate's clouds).
OURS = ('COMPUTE_IMAGE_TYPE_', 'COMPUTE_STORAGE_BUS_')


#: The product's own reading of its log-only lines
#: (``image_type_filter.scheduler.log_only``: its ``PATTERN`` and verdict
#: words, one place for the wording), run by nova-scheduler's Python:
#: ``python3 -m gate_cloud`` imports the standard library only. stdin:
#: log lines; stdout: JSON ``{"lines": [[server, verdict, detail], ...],
#: "add": ..., "refuse": ...}``.
READER = (
    'import json, sys\n'
    'from image_type_filter.scheduler import log_only as lo\n'
    'found = [[m["server"], m["verdict"], m["detail"] or ""]\n'
    '         for m in (lo.PATTERN.search(line.rstrip("\\n"))\n'
    '                   for line in sys.stdin) if m]\n'
    'print(json.dumps({"lines": found, "add": lo.ADD,'
    ' "refuse": lo.REFUSE}))\n')
READER_TIMEOUT = 60


@dataclasses.dataclass(frozen=True)
class Verdicts:
    """The log-only lines of a log, read by the product: (server,
    verdict, detail) each, and the words of its verdicts."""
    lines: tuple
    add: str
    refuse: str

    def about(self, server_id):
        """(verdict, detail) of each line about one server."""
        return [(verdict, detail) for server, verdict, detail in self.lines
                if server == server_id]


def read_verdicts(python, log_lines):
    """Verdicts of ``log_lines``, read by ``python`` (an interpreter
    with this project installed: nova-scheduler's)."""
    try:
        proc = subprocess.run([str(python), '-c', READER],
                              input='\n'.join(log_lines),
                              capture_output=True, text=True,
                              timeout=READER_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise GateError('reading the log-only lines with %s: no answer in '
                        '%d s' % (python, READER_TIMEOUT)) from None
    if proc.returncode != 0:
        raise GateError('reading the log-only lines with %s: exit %d: %s'
                        % (python, proc.returncode,
                           proc.stderr.strip()[-300:]))
    found = json.loads(proc.stdout)
    return Verdicts(tuple(tuple(line) for line in found['lines']),
                    found['add'], found['refuse'])


def added_constraints(detail):
    """{constraint: traits} a ``would add`` line names
    (``root_required=A,B root_forbidden=C``)."""
    found = {}
    for part in detail.split():
        name, _, traits = part.partition('=')
        found.setdefault(name, set()).update(t for t in traits.split(',')
                                             if t)
    return found


#: Where each constraint of a ``would add`` line would be in the query:
#: (parameter, forbidden).
WHERE = {'root_required': ('root_required', False),
         'root_forbidden': ('root_required', True),
         'required': ('required', False), 'forbidden': ('required', True)}


def query_problems(queries, would_add, reserved=()):
    """What in nova-scheduler's queries for a boot came from this
    project's filters (empty when nothing did): a trait of theirs
    anywhere, a forbidden ``reserved`` trait, or a constraint the log line
    says they would add, where they would add it. (A trait the image asks
    for itself is Nova's: ``required``, not ``root_required``.)"""
    problems = []
    for query in queries:
        terms = {}
        for key, _, values in candidates.query_terms(query):
            terms.setdefault(key, set()).update(values)
        ours = sorted(t for t in candidates.traits_of(query)
                      if t.startswith(OURS))
        if ours:
            problems.append('query %s carries %s' % (query, ours))
        for trait in sorted(reserved):
            if any('!' + trait in v for v in terms.values()):
                problems.append('query %s forbids %s' % (query, trait))
        for name, traits in sorted(would_add.items()):
            param, forbidden = WHERE.get(name, (name, False))
            there = terms.get(param, set())
            added = sorted(t for t in traits
                           if ('!' + t if forbidden else t) in there)
            if added:
                problems.append('query %s has %s=%s, which the filters '
                                'would add' % (query, name,
                                               ','.join(added)))
    return problems


def set_enforce(value):
    """``[image_type_filter] enforce`` in nova-scheduler's nova.conf, and
    nova-scheduler restarted until it says it loaded the filters."""
    node.iniset(node.NOVA_CONF, 'image_type_filter', 'enforce', value)
    mark = node.journal(SCHEDULER)[0]
    node.restart(SCHEDULER)
    node.wait_for(lambda: loaded_since(mark), LOAD_DEADLINE,
                  'nova-scheduler loading the filters after a restart')


def loaded_since(mark):
    """Whether nova-scheduler logged the filters loaded after ``mark``."""
    return any(LOADED in m for _, m in node.journal(SCHEDULER, mark)[1])


def one_boot(cloud, label, image_id, flavor_id, would_refuse):
    scheduler_mark = node.journal(SCHEDULER)[0]
    placement_mark = node.journal(node.PLACEMENT)[0]
    server_id, request_id = cloud.create('gate-log-only-' + label,
                                         image_id, flavor_id)
    try:
        server = cloud.wait(server_id, BOOT_DEADLINE)
    finally:
        cloud.delete(server_id)
    if server['status'] != 'ACTIVE':
        raise GateError('log-only, %s boot ended %s (%s): log-only mode '
                        'must change nothing' % (label, server['status'], (
                            server.get('fault') or {}).get('message')))
    read = read_verdicts('%s/python' % node.VENV_BIN, [
        m for _, m in node.journal(SCHEDULER, scheduler_mark)[1]])
    verdicts = read.about(server_id)
    if len(verdicts) != 1:
        raise GateError('log-only, %s boot: %d log-only line(s) for server '
                        '%s in nova-scheduler\'s journal, one wanted'
                        % (label, len(verdicts), server_id))
    verdict, detail = verdicts[0]
    if (verdict == read.refuse) != would_refuse:
        raise GateError('log-only, %s boot: nova-scheduler logged "%s: %s", '
                        'the image is %s' % (
                            label, verdict, detail, 'one no node takes'
                            if would_refuse else 'one the node takes'))
    sent = node.logged_queries(
        node.journal(node.PLACEMENT, placement_mark)[1], request_id)
    if not sent:
        raise GateError('log-only, %s boot: nova-scheduler asked Placement '
                        'nothing' % label)
    problems = query_problems(
        sent, added_constraints(detail) if verdict == read.add
        else {}, node.isolation_traits())
    if problems:
        raise GateError('log-only, %s boot changed the query: %s'
                        % (label, '; '.join(problems)))
    print('[log-only] %-5s ACTIVE, %d quer%s with none of the filters\' '
          'traits; logged "%s"' % (label, len(sent),
                                   'y' if len(sent) == 1 else 'ies',
                                   verdict), flush=True)


def run():
    cloud = node.Cloud()
    raw, flavor_id = node.tempest_boot()
    images = {'raw': raw}
    set_enforce(False)
    try:
        images['qcow2'] = cloud.upload('gate-log-only-qcow2', 'qcow2')
        for label, fmt, would_refuse in BOOTS:
            one_boot(cloud, label, images[fmt], flavor_id, would_refuse)
    finally:
        if 'qcow2' in images:
            cloud.delete_image(images['qcow2'])
        set_enforce(True)


if __name__ == '__main__':
    sys.exit(node.phase_main('log-only', run))
