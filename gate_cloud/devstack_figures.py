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

"""The figures, measured on the devstack cloud in the same run.

Run on the node by ``devstack_job`` (``python3 -m
gate_cloud.devstack_figures``, root). With the filters off, then on
(``[scheduler] filter_hosts_by_image_type_support`` in nova.conf and
nova-scheduler's unit restarted; left on): the median API-to-ACTIVE time
of ``BOOTS`` raw boots one after another, and nova-scheduler's resident
memory after them (its unit's main process and every descendant). One
``[figures]`` line each, and the on/off ratio. They are printed, not
judged: the goal (``GOAL_RATIO``) is the benchmarks', and one node's
figures beside tempest's load are too noisy to fail a gate on.
"""

import statistics
import sys
import time

from gate_cloud import GateError
from gate_cloud import container
from gate_cloud import devstack_node as node

SCHEDULER = 'devstack@n-sch.service'
BOOTS = 10
GOAL_RATIO = 1.05
BOOT_DEADLINE = 180.0


def set_filters(on):
    node.iniset(node.NOVA_CONF, 'scheduler',
                'filter_hosts_by_image_type_support', on)
    node.restart(SCHEDULER)


def rss_mib(unit):
    """(resident MiB, processes) of ``unit``'s main process and every
    descendant of it (nova-scheduler's workers)."""
    pids = set()
    todo = {node.main_pid(unit)}
    while todo:
        pids |= todo
        todo = set().union(*map(container.children, todo)) - pids
    kib = 0
    for pid in pids:
        try:
            with open('/proc/%d/status' % pid) as f:
                kib += sum(int(line.split()[1]) for line in f
                           if line.startswith('VmRSS:'))
        except FileNotFoundError:  # gone meanwhile
            continue
    return round(kib / 1024, 1), len(pids)


def boot_times(cloud, image_id, flavor_id, label):
    times = []
    for n in range(BOOTS):
        start = time.monotonic()
        server = cloud.boot('gate-figures-%s-%d' % (label, n), image_id,
                            flavor_id, BOOT_DEADLINE)
        if server['status'] != 'ACTIVE':
            raise GateError('figure boot %s-%d ended %s: %s' % (
                label, n, server['status'], server.get('fault')))
        times.append(time.monotonic() - start)
    return times


def run():
    cloud = node.Cloud()
    raw, flavor_id = node.tempest_boot()
    medians = {}
    try:
        for state, on in (('off', False), ('on', True)):
            set_filters(on)
            # The first boot after a restart waits on the scheduler's
            # start: made, not counted.
            cloud.boot('gate-figures-warm-%s' % state, raw, flavor_id,
                       BOOT_DEADLINE)
            times = boot_times(cloud, raw, flavor_id, state)
            medians[state] = statistics.median(times)
            rss, processes = rss_mib(SCHEDULER)
            print('[figures] filters %s: median boot %.2f s over %d; '
                  'nova-scheduler %d processes, %.1f MiB resident' % (
                      state, medians[state], BOOTS, processes, rss),
                  flush=True)
    finally:
        set_filters(True)
    print('[figures] median boot ratio on/off: %.3f (the benchmarks\' goal: '
          '<= %.2f)' % (medians['on'] / medians['off'], GOAL_RATIO),
          flush=True)


if __name__ == '__main__':
    sys.exit(node.phase_main('figures', run))
