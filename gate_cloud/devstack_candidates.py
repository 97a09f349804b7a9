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

"""``candidates --server`` on the devstack cloud, held to Placement's log.

Run on the node by ``devstack_job``. Each boot (``run``: raw, qcow2,
raw with the untagged raw hosts disabled, a flavor too big) is made alone
with the filters on; then ``image-type-filter candidates --server ID -f
json`` runs as an operator would on that node, and ``check`` holds its
answer to the ``GET /allocation_candidates`` queries Placement logged
under the boot's request id (its request log, in the journal) and to
where the server went or why it found no host. gate.rst says what each
boot proves.
"""

import dataclasses
import json
import subprocess
import sys
from urllib import parse

from gate_cloud import GateError
from gate_cloud import devstack_node as node

DISABLED = 'COMPUTE_STATUS_DISABLED'
RAW = 'COMPUTE_IMAGE_TYPE_RAW'
DISABLED_REASON = 'gate-maint'
#: A flavor no node has the disk for.
TOO_BIG_DISK_GB = 10 ** 7
BOOT_DEADLINE = 180.0
TRAIT_DEADLINE = 180.0


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
    elif status == 'ERROR' and 'No valid host' in (
            server.get('fault') or {}).get('message', ''):
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


def run_tool(server_id):
    """(exit code, the JSON answer or None, stderr) of the tool."""
    argv = ['%s/image-type-filter' % node.VENV_BIN, 'candidates',
            '--config-file', node.NOVA_CONF, '--os-cloud', node.CLOUD,
            '--server', server_id, '-f', 'json']
    env = {'OS_CLIENT_CONFIG_FILE': node.CLOUDS_YAML,
           'PATH': '/usr/bin:/bin', 'HOME': '/root'}
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True,
                              timeout=CLI_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise GateError('candidates --server %s: no answer in %d s'
                        % (server_id, CLI_TIMEOUT)) from None
    try:
        answer = json.loads(proc.stdout) if proc.stdout.strip() else None
    except ValueError:  # it printed no JSON
        answer = None
    return proc.returncode, answer, proc.stderr


def nova_release():
    version = node.run(['%s/python' % node.VENV_BIN, '-c',
                        'from importlib import metadata; '
                        'print(metadata.version("nova"))']).strip()
    return int(version.split('.')[0])


def wait_trait(cloud, provider, trait, present):
    node.wait_for(
        lambda: (trait in cloud.all_traits().get(provider, ())) == present,
        TRAIT_DEADLINE, '%s %s on %s' % (
            trait, 'on' if present else 'off', provider))


def prove(cloud, label, image_id, flavor_id, expect, release):
    mark = node.journal(node.PLACEMENT)[0]
    server_id, request_id = cloud.create('gate-candidates-' + label,
                                         image_id, flavor_id)
    try:
        server = cloud.wait(server_id, BOOT_DEADLINE)
        logged = node.logged_queries(node.journal(node.PLACEMENT, mark)[1],
                                     request_id)
        code, answer, stderr = run_tool(server_id)
    finally:
        cloud.delete(server_id)
    problems = check(expect, server, logged, code, answer, release)
    print('[candidates] %-9s %-6s; %d quer%s sent; tool exit %s: %s' % (
        label, server['status'], len(logged),
        'y' if len(logged) == 1 else 'ies', code,
        'FAILED' if problems else 'same queries, host and cause'),
        flush=True)
    if problems:
        raise GateError('candidates --server, %s boot: %s%s' % (
            label, '; '.join(problems), ' | stderr: %s' % stderr.strip()[
                -300:] if stderr.strip() else ''))


def untagged_hosts(cloud, trait):
    """The providers an untagged boot of ``trait``'s format may go to:
    those carrying it and none of the traits nova-scheduler's
    ``[image_isolation] rules`` reserve."""
    reserved = node.isolation_traits()
    return sorted(name for name, traits in cloud.all_traits().items()
                  if trait in traits and not reserved & set(traits))


def run():
    cloud = node.Cloud()
    release = nova_release()
    raw, flavor_id = node.tempest_boot()
    hosts = untagged_hosts(cloud, RAW)
    # Every other node is out for the trait an untagged raw boot needs or
    # the one it forbids: the tool must name one of them.
    elsewhere = (RAW,) + tuple(sorted(node.isolation_traits()))
    if not hosts:
        raise GateError('no compute node takes an untagged raw boot: '
                        'Placement has %s' % sorted(cloud.all_traits()))
    nvh = 'ERROR'
    made = {}
    try:
        made['qcow2'] = cloud.upload('gate-candidates-qcow2', 'qcow2')
        made['too-big'] = cloud.create_flavor(
            'gate-candidates-too-big', 64, 1, TOO_BIG_DISK_GB)
        prove(cloud, 'raw', raw, flavor_id, Expect(
            'ACTIVE', queries=1, hosts=frozenset(hosts)), release)
        prove(cloud, 'qcow2', made['qcow2'], flavor_id, Expect(
            nvh, queries=0, no_valid_host=('qcow2',)), release)
        disabled = []
        try:
            for host in hosts:
                cloud.set_compute_service(host, False, DISABLED_REASON)
                disabled.append(host)
                wait_trait(cloud, host, DISABLED, True)
            prove(cloud, 'disabled', raw, flavor_id, Expect(
                nvh, queries=1,
                causes={host: ('!' + DISABLED, DISABLED_REASON)
                        for host in hosts}, other_causes=elsewhere), release)
        finally:
            for host in disabled:
                cloud.set_compute_service(host, True)
                wait_trait(cloud, host, DISABLED, False)
        prove(cloud, 'too-big', raw, made['too-big'], Expect(
            nvh, queries=1, causes={host: ('DISK_GB',) for host in hosts},
            other_causes=elsewhere), release)
    finally:
        if 'qcow2' in made:
            cloud.delete_image(made['qcow2'])
        if 'too-big' in made:
            cloud.delete_flavor(made['too-big'])


if __name__ == '__main__':
    sys.exit(node.phase_main('candidates', run))
