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

"""``image-type-filter candidates --server``, held to what really happened.

For one server the gate booted (alone, so its scheduling is the only one
under its request id), ``check`` compares the tool's answer with the
truth: the ``GET /allocation_candidates`` queries Placement's access log
shows nova-scheduler sent under the boot's global request id
(``access_log.py``), and where the server went. The tool's queries must be
the scheduler's, as many and each the same (same parameters with the same
terms: order and encoding aside, compared here by code of the gate's own,
not the tool's); an ACTIVE server's host must be one the tool says
Placement offers (``candidate``, or ``current host, fits`` with the
server's own allocation given back); a server in "No valid host" must make
the tool exit 3 and name, for every host, the cause the boot was built to
meet (``Expect``).

The tool runs from the cloud's clients' virtualenv, with the admin entry
of ``.cloud/clouds.yaml`` (it reads Nova: servers of any project, flavor
extra specs, aggregates, compute services) and the nova.conf
nova-scheduler runs with (its options, and whether it loads this
project's filters).
"""

import dataclasses
import json
import os
import pathlib
import subprocess
from urllib import parse

from gate_cloud import access_log
from gate_cloud import boots
from gate_cloud import layout
from gate_cloud.processes import GateError

#: Seconds one run of the tool may take (it has a timeout on every call).
CLI_TIMEOUT = 300
#: The tool's exit code when Placement offers no host.
NO_VALID_HOST_EXIT = 3
#: What the tool says of a host Placement offers.
OFFERED = ('candidate', 'current host, fits')
#: The first Nova release whose scheduler requires OWNER_NOVA (every
#: nova-compute at service version 73).
OWNER_NOVA_SINCE = 34


@dataclasses.dataclass(frozen=True)
class Expect:
    """What a boot was built to do, worked out from Placement's and
    cloud.json's facts before it is booted.

    ``status``: ``ACTIVE`` or ``ERROR``, or None where either may come
    (the tool is checked on whichever came). ``queries``: how many
    queries nova-scheduler sends (None: any). ``hosts``: where an ACTIVE
    server may land (None: any host the tool says is offered).
    ``causes``: for "No valid host", {host: words} each of which that
    host's reasons must name; ``other_causes``: words one of which every
    other host's reasons must name. ``no_valid_host``: words the tool's
    ``no_valid_host`` must hold."""
    status: str = 'ACTIVE'
    queries: int = None
    hosts: frozenset = None
    causes: dict = dataclasses.field(default_factory=dict)
    other_causes: tuple = ()
    no_valid_host: tuple = ()


def query_terms(query):
    """A query (a URL or a query string) as a comparable value: each
    parameter with its terms, order aside, encoding aside (``member_of``
    keeps its ``in:`` or ``!`` prefix ahead of the sorted uuids)."""
    text = str(query).split('?', 1)[-1]
    out = []
    for key, value in parse.parse_qsl(text, keep_blank_values=True,
                                      strict_parsing=False):
        prefix = ''
        if key.startswith('member_of'):
            for mark in ('in:', '!in:', '!'):
                if value.startswith(mark):
                    prefix, value = mark, value[len(mark):]
                    break
        out.append((key, prefix, tuple(sorted(value.split(',')))))
    return sorted(out)


def same_query(ours, theirs):
    return query_terms(ours) == query_terms(theirs)


def traits_of(query):
    """Every trait a query names (required, forbidden, any-of), without
    its ``!``."""
    found = set()
    for key, _, terms in query_terms(query):
        if 'required' in key:
            for term in terms:
                term = term[3:] if term.startswith('in:') else term
                found.add(term.lstrip('!'))
    return found


def _reasons(host):
    return ' | '.join(host.get('reasons') or ())


def is_no_valid_host(server):
    return server.get('status') == 'ERROR' and 'No valid host' in (
        server.get('fault') or {}).get('message', '')


def check(expect, server, logged, exit_code, answer, release):
    """What is wrong with the tool's answer for ``server`` (a list of
    one-line problems; empty when it holds)."""
    problems = []
    status = server.get('status')
    if expect.status and status != expect.status:
        problems.append('the server ended %s, the boot was built to end %s '
                        '(fault: %s)' % (status, expect.status, (
                            server.get('fault') or {}).get('message')))
    if answer is None:
        return problems + ['the tool printed no JSON (exit %s)' % exit_code]
    ours = list(answer.get('queries') or [])
    if expect.queries is not None and len(logged) != expect.queries:
        problems.append('nova-scheduler sent %d queries, the boot was built '
                        'for %d' % (len(logged), expect.queries))
    if len(ours) != len(logged):
        problems.append('the tool builds %d queries, nova-scheduler sent %d'
                        % (len(ours), len(logged)))
    for n, (mine, sent) in enumerate(zip(ours, logged, strict=False), 1):
        if not same_query(mine, sent):
            problems.append('query %d differs: the tool %s, nova-scheduler '
                            '%s' % (n, mine, sent))
    seen = (answer.get('nova') or {}).get('release')
    if seen != release:
        problems.append('the tool built for Nova %s, the cloud runs Nova %s'
                        % (seen, release))
    if release >= OWNER_NOVA_SINCE:
        missing = [q for q in logged if 'OWNER_NOVA' not in
                   traits_of(q)]
        if missing:
            problems.append('nova-scheduler %s sent no OWNER_NOVA: %s'
                            % (release, missing[0]))
    hosts = {h.get('name'): h for h in answer.get('hosts') or ()}
    if status == 'ACTIVE':
        landed = boots.host_of_node(server)
        verdict = hosts.get(landed, {}).get('result')
        if verdict not in OFFERED:
            problems.append('it landed on %s, which the tool says is %s'
                            % (landed, verdict or 'not a host it knows'))
        if expect.hosts is not None and landed not in expect.hosts:
            problems.append('it landed on %s, the boot was built for %s'
                            % (landed, sorted(expect.hosts)))
        if exit_code != 0:
            problems.append('the tool exited %s for a server Placement '
                            'placed' % exit_code)
    elif is_no_valid_host(server):
        if exit_code != NO_VALID_HOST_EXIT:
            problems.append('the tool exited %s, not %d, for a server in '
                            '"No valid host"' % (exit_code,
                                                 NO_VALID_HOST_EXIT))
        offered = sorted(n for n, h in hosts.items()
                         if h.get('result') in OFFERED)
        if offered:
            problems.append('the tool says Placement offers %s to a server '
                            'that found no host' % offered)
        for name, words in expect.causes.items():
            reasons = _reasons(hosts.get(name, {}))
            lacking = [w for w in words if w not in reasons]
            if name not in hosts or lacking:
                problems.append('host %s: the tool does not name %s (%s)'
                                % (name, lacking or list(words),
                                   reasons or 'no such host'))
        if expect.other_causes:
            for name, host in sorted(hosts.items()):
                if name in expect.causes:
                    continue
                reasons = _reasons(host)
                if not any(w in reasons for w in expect.other_causes):
                    problems.append('host %s: the tool names none of %s (%s)'
                                    % (name, list(expect.other_causes),
                                       reasons or 'no reason'))
        said = answer.get('no_valid_host') or ''
        lacking = [w for w in expect.no_valid_host if w not in said]
        if lacking:
            problems.append('no_valid_host does not name %s: %s'
                            % (lacking, said))
    return problems


def run_tool(cloud, server_id, nova_conf):
    """(exit code, the JSON answer or None, stderr) of
    ``image-type-filter candidates --server``."""
    venv = pathlib.Path(cloud['venv'])
    env = {k: v for k, v in os.environ.items()
           if not k.startswith('OS_') and not k.lower().endswith('_proxy')}
    env['OS_CLIENT_CONFIG_FILE'] = str(layout.path('clouds.yaml'))
    argv = [str(venv / 'bin' / 'image-type-filter'), 'candidates',
            '--config-file', str(nova_conf), '--os-cloud', layout.CLOUD_NAME,
            '--server', server_id, '-f', 'json']
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True,
                              timeout=CLI_TIMEOUT, cwd=str(layout.STATE))
    except subprocess.TimeoutExpired:
        raise GateError('candidates --server %s: no answer in %d s'
                        % (server_id, CLI_TIMEOUT)) from None
    return proc.returncode, json_answer(proc.stdout), proc.stderr


def json_answer(stdout):
    """The tool's ``-f json`` answer, or None where it printed none."""
    try:
        return json.loads(stdout) if stdout.strip() else None
    except ValueError:
        return None


def nova_release(ctx):
    """The major release of the Nova nova-scheduler runs (its series'
    pinned set): what the tool must build for."""
    from gate_cloud import series
    from gate_cloud.services import nova_scheduler
    version = series.pins(ctx.series_of(nova_scheduler.NAME))['nova']
    return int(version.split('.')[0])


def prove(cloud, ctx, server, request_id, mark, expect, nova_conf, label):
    """Run the tool on a booted ``server`` (still there) and check it;
    returns the record the phase keeps, raises GateError naming every
    problem. ``mark``: Placement's access-log line count before the
    boot."""
    logged = access_log.candidate_queries(
        access_log.since('placement', mark), request_id)
    code, answer, stderr = run_tool(cloud, server['id'], nova_conf)
    problems = check(expect, server, logged, code, answer,
                     nova_release(ctx))
    record = {'boot': label, 'server': server['id'],
              'status': server['status'], 'host': boots.host_of_node(server),
              'queries_sent': len(logged), 'exit': code,
              'no_valid_host': (answer or {}).get('no_valid_host')}
    print('[candidates] %-16s %-6s on %s; %d quer%s sent; tool exit %s: %s'
          % (label, server['status'], record['host'] or '-', len(logged),
             'y' if len(logged) == 1 else 'ies', code,
             'FAILED' if problems else 'same queries, host and cause'),
          flush=True)
    if problems:
        raise GateError('candidates --server, %s boot (server %s): %s%s'
                        % (label, server['id'], '; '.join(problems),
                           ' | stderr: %s' % stderr.strip()[-300:]
                           if stderr.strip() else ''))
    return record
