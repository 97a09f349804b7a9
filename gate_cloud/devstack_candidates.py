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
    tempest's raw image: ACTIVE on the fake driver's node, one query.
``qcow2``
    a format no node boots: "No valid host" before Placement is asked;
    the tool names qcow2.
``disabled``
    the node's nova-compute disabled (``COMPUTE_STATUS_DISABLED`` on its
    provider): a raw boot finds no host, and the tool names the disabled
    service and its reason for the node (then it is enabled again).
``too-big``
    a flavor bigger than the node: the tool names its disk.
"""

import subprocess
import sys

from gate_cloud import candidates
from gate_cloud import devstack_node as node
from gate_cloud.processes import GateError

DISABLED = 'COMPUTE_STATUS_DISABLED'
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


def run():
    cloud = node.Cloud()
    release = nova_release()
    raw, flavor_id = node.tempest_boot()
    providers = sorted(cloud.all_traits())
    if len(providers) != 1:
        raise GateError('the phase is built for one compute node, Placement '
                        'has %s' % providers)
    host = providers[0]
    nvh = 'ERROR'
    made = {}
    try:
        made['qcow2'] = cloud.upload('gate-candidates-qcow2', 'qcow2',
                                     node.image_file('qcow2'))
        made['too-big'] = cloud.create_flavor(
            'gate-candidates-too-big', 64, 1, TOO_BIG_DISK_GB)
        prove(cloud, 'raw', raw, flavor_id, candidates.Expect(
            'ACTIVE', queries=1, hosts=frozenset([host])), release)
        prove(cloud, 'qcow2', made['qcow2'], flavor_id, candidates.Expect(
            nvh, queries=0, no_valid_host=('qcow2',)), release)
        cloud.set_compute_service(host, False, DISABLED_REASON)
        try:
            wait_trait(cloud, host, DISABLED, True)
            prove(cloud, 'disabled', raw, flavor_id, candidates.Expect(
                nvh, queries=1,
                causes={host: ('!' + DISABLED, DISABLED_REASON)}), release)
        finally:
            cloud.set_compute_service(host, True)
            wait_trait(cloud, host, DISABLED, False)
        prove(cloud, 'too-big', raw, made['too-big'], candidates.Expect(
            nvh, queries=1, causes={host: ('DISK_GB',)}), release)
    finally:
        if 'qcow2' in made:
            cloud.delete_image(made['qcow2'])
        if 'too-big' in made:
            cloud.delete_flavor(made['too-big'])


if __name__ == '__main__':
    sys.exit(node.phase_main('candidates', run))
