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

"""The roll-out mode: ``[image_type_filter] enforce = False`` changes nothing.

nova-scheduler is restarted with the filters loaded in log-only mode, and
servers are booted one at a time: an untagged raw image (the filters
would add its format's trait and forbid the reserved one), a vmdk image
and an ``hw_disk_bus=xen`` image (no host reports either trait: the
filters would refuse both), and a ``trait:CUSTOM_TROVE=required`` image.
For each:

* no boot changed place: every query nova-scheduler sent for it
  (Placement's access log, by the boot's request id) carries none of this
  project's traits (no ``COMPUTE_IMAGE_TYPE_*``, no storage bus trait,
  no forbidden reserved trait, none of what its log line says it would
  add), and ``candidates --server`` with the filters-off nova.conf builds
  exactly those queries and says the host the server went to is one
  Placement offers them: a host the filters-off scheduler could pick;
* every would-be refusal is logged: one ``image-type-filter log-only``
  line per boot in nova-scheduler's log, ``would refuse`` for exactly the
  boots whose image no host can take (worked out from Placement's traits,
  not from the filters), and as many ``would refuse`` lines in the phase
  as such boots.

nova-scheduler is switched back to the filters on at the end.
"""

import dataclasses
import json
import subprocess

from gate_cloud import access_log
from gate_cloud import boots
from gate_cloud import candidates
from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import logfiles
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import nova
from gate_cloud.services import nova_scheduler

#: Trait prefixes only this project's filters add to a query here (Nova's
#: own image-type and image-metadata prefilters are off in this cloud).
OURS = ('COMPUTE_IMAGE_TYPE_', 'COMPUTE_STORAGE_BUS_')
#: The boots: (label, disk format, image properties).
BOOTS = (
    ('raw', 'raw', {}),
    ('vmdk', 'vmdk', {}),
    ('xen-bus', 'raw', {'hw_disk_bus': 'xen'}),
    ('trove', 'raw', {'trait:%s' % layout.RESERVED_TRAIT: 'required'}),
)
#: Image property -> the prefix of the trait a host needs for it (the
#: storage_bus family, enabled in this cloud).
FAMILY_PROPERTIES = {'hw_disk_bus': 'COMPUTE_STORAGE_BUS_'}


def filters_off_conf():
    """nova-scheduler's nova.conf with the filters off, beside its own:
    what the tool asks as the filters-off scheduler would."""
    return nova.conf_path('scheduler-filters-off')


def refused(disk_format, properties, carried):
    """Whether the filters would refuse an image: its format's trait, or
    an enabled family's trait for a property, on no provider
    (``carried``: every trait some provider has)."""
    wanted = ['COMPUTE_IMAGE_TYPE_' + disk_format.upper()]
    wanted += [prefix + str(properties[prop]).upper()
               for prop, prefix in FAMILY_PROPERTIES.items()
               if prop in properties]
    return any(t not in carried for t in wanted)


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


def query_problems(queries, would_add):
    """What in nova-scheduler's queries for a boot came from this
    project's filters (empty when nothing did): a trait of theirs
    anywhere, a forbidden reserved trait, or a constraint the log line
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
        if any('!' + layout.RESERVED_TRAIT in v for v in terms.values()):
            problems.append('query %s forbids %s' % (
                query, layout.RESERVED_TRAIT))
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


def run(cloud, ctx):
    admin = ctx.admin
    carried = set().union(*rest.all_traits(admin).values())
    inifile.write_conf(filters_off_conf(), nova_scheduler.conf(
        ctx.creds, filters_on=False))
    files = cloud['image_files']
    images, servers, records = {}, [], []
    expected_refusals = 0
    log = nova_scheduler.log_file()
    python = ctx.bin(nova_scheduler.NAME, 'python')
    nova_scheduler.set_filters(ctx, True, enforce=False)
    try:
        start = logfiles.size(log)
        for label, fmt, props in BOOTS:
            images[label] = boots.upload_image(
                admin, 'gate-log-only-' + label, fmt, files[fmt], props)
        for label, fmt, props in BOOTS:
            would_refuse = refused(fmt, props, carried)
            expected_refusals += would_refuse
            mark = access_log.mark('placement')
            sid, request_id = boots.create_server(
                admin, 'gate-log-only-' + label, images[label])
            servers.append(sid)
            server = boots.wait(admin, sid)
            read = read_verdicts(
                python, logfiles.read_from(log, start).splitlines())
            verdicts = read.about(sid)
            if len(verdicts) != 1:
                raise GateError('log-only, %s boot: %d log-only line(s) for '
                                'server %s in %s, one wanted' % (
                                    label, len(verdicts), sid, log))
            verdict, detail = verdicts[0]
            if (verdict == read.refuse) != would_refuse:
                raise GateError('log-only, %s boot: the scheduler logged '
                                '"%s: %s", the image is %s' % (
                                    label, verdict, detail,
                                    'one no host takes' if would_refuse
                                    else 'one a host takes'))
            sent = access_log.candidate_queries(
                access_log.since('placement', mark), request_id)
            if not sent:
                raise GateError('log-only, %s boot: nova-scheduler asked '
                                'Placement nothing (was it refused?)'
                                % label)
            problems = query_problems(sent, added_constraints(detail)
                                      if verdict == read.add
                                      else {})
            if problems:
                raise GateError('log-only, %s boot changed the query: %s'
                                % (label, '; '.join(problems)))
            record = candidates.prove(
                cloud, ctx, server, request_id, mark,
                candidates.Expect(status=None, queries=len(sent)),
                filters_off_conf(), 'log-only-' + label)
            record['logged'] = '%s%s' % (verdict, ': ' + detail
                                         if detail else '')
            records.append(record)
            boots.delete(admin, servers.pop())
        refusals = read_verdicts(
            python, logfiles.read_from(log, start).splitlines()).refusals()
        if len(refusals) != expected_refusals:
            raise GateError('log-only: %d "would refuse" line(s) in %s, %d '
                            'boot(s) the filters would refuse'
                            % (len(refusals), log, expected_refusals))
        print('[log-only] %d boots, none changed place; %d "would refuse" '
              'line(s) for the %d boot(s) no host takes' % (
                  len(BOOTS), len(refusals), expected_refusals), flush=True)
    finally:
        for sid in servers:
            boots.delete(admin, sid)
        for image_id in images.values():
            boots.delete_image(admin, image_id)
        nova_scheduler.set_filters(ctx, True)
    return {'boots': records, 'would_refuse_lines': expected_refusals}
