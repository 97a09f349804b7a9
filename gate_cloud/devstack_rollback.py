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

"""The filters rolled back on the devstack node, as upgrade.rst says.

Run on the node on grenade's upgraded cloud: the first two steps of
"Rolling the filters back" (Nova's own ``query_placement_for_image_type_
support`` beside the filters, then the filters' lines out of nova.conf),
nova-scheduler restarted after each, and after each a raw boot ACTIVE and
a qcow2 boot refused (naming the format while the filters are in, Nova's
bare fault once they are out). The package's uninstall comes after the
reporters' removal (``devstack_removal``): on a devstack node they share
one environment.
"""

import sys

from gate_cloud import GateError
from gate_cloud import devstack_node as node
from gate_cloud.devstack_log_only import SCHEDULER
from gate_cloud.devstack_log_only import loaded_since

#: upgrade.rst's rollback, step by step (a test holds the page to it):
#: the first two here, the third in ``devstack_removal``.
STEPS = ("Turn on Nova's own mechanisms beside the filters",
         "Take the filters' lines out of nova.conf",
         "Uninstall the package from nova-scheduler's environment")
MODULE = 'image_type_filter.nova.all_filters'
REBUILD_FILTER = 'ImageTypeRebuildFilter'
SECTIONS = ('image_type_filter', 'image_isolation', 'image_metadata_prefilter')
BOOT_DEADLINE = 180.0
START_DEADLINE = 300.0
#: The refusal that names the format: this project's.
NAMED = 'No compute host boots qcow2'


def restart_scheduler():
    """nova-scheduler restarted and running; the journal's cursor from
    before, for the caller to read whether it logged the filters loaded."""
    mark = node.journal(SCHEDULER)[0]
    node.restart(SCHEDULER)
    node.wait_for(lambda: node.main_pid(SCHEDULER) != 0, START_DEADLINE,
                  'nova-scheduler running after a restart')
    return mark


def boots_right(cloud, step, images, flavor_id, named):
    raw = cloud.boot('gate-rollback-raw', images['raw'], flavor_id,
                     BOOT_DEADLINE)
    if raw['status'] != 'ACTIVE':
        raise GateError('rollback, %s: a raw boot ended %s (%s)' % (
            step, raw['status'], (raw.get('fault') or {}).get('message')))
    qcow2 = cloud.boot('gate-rollback-qcow2', images['qcow2'], flavor_id,
                       BOOT_DEADLINE)
    fault = (qcow2.get('fault') or {}).get('message', '')
    if qcow2['status'] != 'ERROR' or (NAMED in fault) != named:
        raise GateError('rollback, %s: a qcow2 boot ended %s (%s); wanted '
                        'ERROR %s' % (step, qcow2['status'], fault,
                                      'naming the format' if named else
                                      'with Nova\'s own fault'))
    print('[rollback] %s: raw ACTIVE, qcow2 ERROR (%s)' % (
        step, 'named' if named else 'Nova\'s fault'), flush=True)


def without_section(text, section):
    """nova.conf's text without ``[section]`` and its lines."""
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.strip().startswith('['):
            inside = line.strip() == '[%s]' % section
        if not inside:
            out.append(line)
    return ''.join(out)


def take_lines_out(conf=node.NOVA_CONF):
    """This project's lines out of nova-scheduler's nova.conf."""
    available = node.run(['bash', '-c', 'source "$0/devstack/inc/'
                          'ini-config" && iniget_multiline "$1" '
                          'filter_scheduler available_filters', node.DEST,
                          conf]).split()
    kept = [name for name in available if name != MODULE]
    node.run(['bash', '-c', 'source "$0/devstack/inc/ini-config" && '
              'iniset_multiline "$1" filter_scheduler available_filters '
              '"${@:2}"', node.DEST, conf] + kept)
    enabled = node.run(['bash', '-c', 'source "$0/devstack/inc/'
                        'ini-config" && iniget "$1" filter_scheduler '
                        'enabled_filters', node.DEST, conf]).strip()
    node.iniset(conf, 'filter_scheduler', 'enabled_filters', ','.join(
        f for f in enabled.split(',') if f and f != REBUILD_FILTER))
    node.run(['bash', '-c', 'source "$0/devstack/inc/ini-config" && '
              'inidelete "$1" scheduler filter_hosts_by_image_type_support',
              node.DEST, conf])
    with open(conf) as f:
        text = f.read()
    for section in SECTIONS:
        text = without_section(text, section)
    with open(conf, 'w') as f:
        f.write(text)


def run():
    cloud = node.Cloud()
    flavor_id = node.tempest_boot()[1]
    images = {fmt: cloud.upload('gate-rollback-' + fmt, fmt)
              for fmt in ('raw', 'qcow2')}
    before = cloud.all_traits()
    try:
        node.iniset(node.NOVA_CONF, 'scheduler',
                    'query_placement_for_image_type_support', True)
        mark = restart_scheduler()
        boots_right(cloud, 'Nova\'s own mechanism on', images, flavor_id,
                    named=True)
        if not loaded_since(mark):
            raise GateError('rollback: nova-scheduler did not log the '
                            'filters loaded with its lines in')
        take_lines_out()
        mark = restart_scheduler()
        boots_right(cloud, 'the filters\' lines out', images, flavor_id,
                    named=False)
        if loaded_since(mark):
            raise GateError('rollback: nova-scheduler still loads the '
                            'filters with its lines out')
    finally:
        for image_id in images.values():
            cloud.delete_image(image_id)
    after = cloud.all_traits()
    lost = sum(len(set(traits) - set(after.get(name, ())))
               for name, traits in before.items())
    print('[rollback] traits lost %d' % lost, flush=True)
    if lost:
        raise GateError('rollback: %d trait(s) lost: %s -> %s'
                        % (lost, before, after))


if __name__ == '__main__':
    sys.exit(node.phase_main('rollback', run))
