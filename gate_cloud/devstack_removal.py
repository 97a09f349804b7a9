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

"""The reporters removed on the devstack node, then the package.

Run on the node (``python3 -m gate_cloud.devstack_removal``, root), after
``devstack_rollback``, in upgrade.rst's order ("Removing the
reporters"): every reporter's unit is stopped, then each runs
``virt-capabilities remove`` with the config files its unit ran it with.
Afterwards none of the traits the reporters' records (their state files)
name is on its provider, and every other trait of every provider is
exactly as before. The records must name at least one trait, or the
removal proves nothing. Last, the rollback's third step: the package
uninstalled from devstack's environment (nova-scheduler's, and the
reporters'), nova-scheduler restarted, and a raw boot still ACTIVE.
"""

import configparser
import json
import sys

from gate_cloud import GateError
from gate_cloud import devstack_node as node
from gate_cloud.devstack_faults import reporter_units
from gate_cloud.devstack_log_only import SCHEDULER

#: upgrade.rst's removal, step by step (a test holds the page to it).
STEPS = ('Stop every reporter',
         'Run virt-capabilities remove with the config files each '
         'reporter ran with')
BOOT_DEADLINE = 180.0
START_DEADLINE = 300.0


def recorded(files):
    """{provider uuid: traits} the reporters' state file (named by the
    last config file that names one) says they set."""
    conf = configparser.ConfigParser(interpolation=None, strict=False)
    conf.read(files)
    path = conf.get('virt_capabilities', 'state_file', fallback=None)
    if not path:
        raise GateError('no [virt_capabilities] state_file in %s'
                        % ', '.join(files))
    with open(path) as f:
        document = json.load(f)
    return {uuid: {t for traits in reporters.values() for t in traits}
            for uuid, reporters in document.get('providers', {}).items()}


def traits_by_uuid(cloud):
    return {uuid: set(traits)
            for uuid, traits in cloud.all_traits(by='uuid').items()}


def judge(before, after, records):
    """Problems of a removal: a recorded trait left, any other trait
    changed; and the count of traits lost that were not recorded."""
    problems = []
    for uuid, traits in sorted(before.items()):
        mine = records.get(uuid, set())
        left = sorted(mine & after.get(uuid, set()))
        if left:
            problems.append('%s still carries %s' % (uuid, ', '.join(left)))
        if traits - mine != after.get(uuid, set()) - mine:
            problems.append('%s: other traits changed: %s -> %s' % (
                uuid, sorted(traits - mine),
                sorted(after.get(uuid, set()) - mine)))
    lost = sum(len((traits - records.get(uuid, set())) - after.get(
        uuid, set())) for uuid, traits in before.items())
    return problems, lost


def run():
    cloud = node.Cloud()
    units = reporter_units()
    argvs = {unit: node.unit_argv(unit) for unit in units}
    records = {}
    for argv in argvs.values():
        for uuid, traits in recorded(node.config_files(argv)).items():
            records.setdefault(uuid, set()).update(traits)
    if not any(records.values()):
        raise GateError('the reporters\' records name no trait: the '
                        'removal would prove nothing')
    before = traits_by_uuid(cloud)
    for unit in units:
        node.run(['systemctl', 'stop', unit])
    for argv in argvs.values():
        node.run(['sudo', '-u', 'stack', '%s/virt-capabilities' %
                  node.VENV_BIN, 'remove'] + [
            a for f in node.config_files(argv) for a in ('--config-file', f)])
    after = traits_by_uuid(cloud)
    problems, lost = judge(before, after, records)
    if problems:
        raise GateError('removal: %s' % '; '.join(problems))
    print('[removal] %d reporter(s) stopped and removed: %d recorded '
          'trait(s) gone, traits lost %d' % (
              len(units), sum(map(len, records.values())), lost),
          flush=True)
    node.run(['%s/pip' % node.VENV_BIN, 'uninstall', '-y',
              'image-type-filter'], timeout=600)
    node.restart(SCHEDULER)
    flavor_id = node.tempest_boot()[1]
    image_id = cloud.upload('gate-removal-raw', 'raw')
    try:
        node.wait_for(lambda: node.main_pid(SCHEDULER) != 0, START_DEADLINE,
                      'nova-scheduler running without the package')
        server = cloud.boot('gate-removal-raw', image_id, flavor_id,
                            BOOT_DEADLINE)
    finally:
        cloud.delete_image(image_id)
    if server['status'] != 'ACTIVE':
        raise GateError('removal: with the package uninstalled a raw boot '
                        'ended %s (%s)' % (server['status'], (
                            server.get('fault') or {}).get('message')))
    print('[removal] package uninstalled, nova-scheduler restarted: a raw '
          'boot ACTIVE', flush=True)


if __name__ == '__main__':
    sys.exit(node.phase_main('removal', run))
