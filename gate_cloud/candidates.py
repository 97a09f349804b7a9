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
truth: the ``GET /allocation_candidates`` queries Placement's request log
shows nova-scheduler sent under the boot's request id
(``devstack_node.logged_queries``), and where the server went. The tool's
queries must be the scheduler's, as many and each the same (same
parameters with the same terms: order and encoding aside, compared here
by code of the gate's own, not the tool's); an ACTIVE server's host
must be one the tool says Placement offers (``candidate``, or ``current
host, fits`` with the server's own allocation given back); a server in
"No valid host" must make the tool exit 3 and name, for every host, the
cause the boot was built to meet (``Expect``).

``devstack_candidates`` runs the tool on the devstack node and boots the
servers; this module is the judge, apart so that it is tested alone.
"""

import dataclasses
import json
from urllib import parse

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
    """What a boot was built to do, worked out from Placement's facts
    before it is booted.

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
        landed = server.get('OS-EXT-SRV-ATTR:hypervisor_hostname')
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


def json_answer(stdout):
    """The tool's ``-f json`` answer, or None where it printed none."""
    try:
        return json.loads(stdout) if stdout.strip() else None
    except ValueError:
        return None
