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

"""The roll-out mode's judges: ``[image_type_filter] enforce = False``
changes nothing.

``devstack_log_only`` boots on the devstack node with nova-scheduler in
log-only mode; these read what it logged (with the product's own parser)
and what its queries to Placement carried: none of the filters' traits,
no forbidden reserved trait, nothing its log-only line says it would add.
"""

import dataclasses
import json
import subprocess

from gate_cloud import candidates
from gate_cloud.processes import GateError

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

    def refusals(self):
        return [line for line in self.lines if line[1] == self.refuse]


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
