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

Run on the node by ``devstack_job`` (``python3 -m
gate_cloud.devstack_candidates``, root). Each boot is made alone, with the
filters on; then ``image-type-filter candidates --server ID -f json`` runs
as an operator would on that node (devstack's admin from clouds.yaml,
nova-scheduler's nova.conf) and is held by ``candidates.check`` to the
``GET /allocation_candidates`` queries Placement logged under the boot's
request id (its request log, in the journal) and to where the server went:

``raw``
    tempest's raw image: ACTIVE, one query, on a node an untagged raw boot
    may go to (``COMPUTE_IMAGE_TYPE_RAW`` and no trait ``[image_isolation]
    rules`` reserves: with the devstack job's three fake nodes, the
    first).
``qcow2``
    a format no node boots: "No valid host" before Placement is asked;
    the tool names qcow2.
``disabled``
    those nodes' nova-compute disabled (``COMPUTE_STATUS_DISABLED`` on
    their providers): a raw boot finds no host, and the tool names the
    disabled service and its reason for each (then they are enabled
    again).
``too-big``
    a flavor bigger than those nodes: the tool names their disk.
"""

import subprocess
import sys

from gate_cloud import candidates
from gate_cloud import devstack_node as node
from gate_cloud.processes import GateError

DISABLED = 'COMPUTE_STATUS_DISABLED'
RAW = 'COMPUTE_IMAGE_TYPE_RAW'
DISABLED_REASON = 'gate-maint'
#: A flavor no node has the disk for.
TOO_BIG_DISK_GB = 10 ** 7
BOOT_DEADLINE = 180.0
TRAIT_DEADLINE = 180.0


def run_tool(server_id):
    """(exit code, the JSON answer or None, stderr) of the tool."""
    argv = ['%s/image-type-filter' % node.VENV_BIN, 'candidates',
            '--config-file', node.NOVA_CONF, '--os-cloud', node.CLOUD,
            '--server', server_id, '-f', 'json']
    env = {'OS_CLIENT_CONFIG_FILE': node.CLOUDS_YAML,
           'PATH': '/usr/bin:/bin', 'HOME': '/root'}
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True,
                              timeout=candidates.CLI_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise GateError('candidates --server %s: no answer in %d s'
                        % (server_id, candidates.CLI_TIMEOUT)) from None
    return proc.returncode, candidates.json_answer(proc.stdout), proc.stderr


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
    problems = candidates.check(expect, server, logged, code, answer,
                                release)
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
    if not hosts:
        raise GateError('no compute node takes an untagged raw boot: '
                        'Placement has %s' % sorted(cloud.all_traits()))
    nvh = 'ERROR'
    made = {}
    try:
        made['qcow2'] = cloud.upload('gate-candidates-qcow2', 'qcow2',
                                     node.image_file('qcow2'))
        made['too-big'] = cloud.create_flavor(
            'gate-candidates-too-big', 64, 1, TOO_BIG_DISK_GB)
        prove(cloud, 'raw', raw, flavor_id, candidates.Expect(
            'ACTIVE', queries=1, hosts=frozenset(hosts)), release)
        prove(cloud, 'qcow2', made['qcow2'], flavor_id, candidates.Expect(
            nvh, queries=0, no_valid_host=('qcow2',)), release)
        disabled = []
        try:
            for host in hosts:
                cloud.set_compute_service(host, False, DISABLED_REASON)
                disabled.append(host)
                wait_trait(cloud, host, DISABLED, True)
            prove(cloud, 'disabled', raw, flavor_id, candidates.Expect(
                nvh, queries=1,
                causes={host: ('!' + DISABLED, DISABLED_REASON)
                        for host in hosts}), release)
        finally:
            for host in disabled:
                cloud.set_compute_service(host, True)
                wait_trait(cloud, host, DISABLED, False)
        prove(cloud, 'too-big', raw, made['too-big'], candidates.Expect(
            nvh, queries=1, causes={host: ('DISK_GB',) for host in hosts}),
            release)
    finally:
        if 'qcow2' in made:
            cloud.delete_image(made['qcow2'])
        if 'too-big' in made:
            cloud.delete_flavor(made['too-big'])


if __name__ == '__main__':
    sys.exit(node.phase_main('candidates', run))
