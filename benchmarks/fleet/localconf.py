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

"""The fleet cloud's local.conf: the gate job's, sized for a fleet.

Rendered inside the container (``python3 -m benchmarks.fleet.localconf``,
the container's python3 with Debian's python3-yaml) by the gate's own
renderer (``gate_cloud/localconf.py``: the controller of ``.zuul.yaml``'s
``image-type-filter-devstack-multinode`` job, this machine's facts), with
what a scheduling measurement on a fleet changes on top:

* **Services.** Keystone, MySQL, RabbitMQ, Glance, Placement, nova-api,
  the conductor, nova-scheduler and one nova-compute per host group.
  Left out, and why: neutron and OVN (boots are ``--nic none``, API 2.37,
  so no port is made; the benchmark reads a server's state from Nova's
  database, since nova-api's server reads ask neutron for security
  groups), tempest (the benchmark boots itself), the metadata API, and
  devstack's dstat, memory and file trackers (they would share the two
  cores being measured). The devstack plugin's reporters are off: the
  fleet's reporters run with the benchmark's own configuration
  (``reporters.py``). The fleet's own devstack plugin (``gate.PLUGIN_SH``)
  puts the scale driver into nova's tree.
* **Each host group** (``shape.py``) is one nova-compute running the scale
  driver with its node count, exclude list and architecture.
* **Settings that keep two cores alive at a thousand nodes**: nova-compute's
  periodic resource update once a day (it walks every node and blocks
  builds), a generous ``service_down_time``, no provider-association
  refresh, one scheduler worker, ``max_placement_results`` at least the
  fleet (Placement's whole candidate set), and no instance quota.
"""

import argparse
import json
import sys

from benchmarks.fleet import gate
from benchmarks.fleet import shape

#: devstack's service names the benchmark turns off (see above).
SERVICES_OFF = ('tempest', 'q-svc', 'q-ovn-agent', 'q-ovn-metadata-agent',
                'ovn-controller', 'ovn-northd', 'ovs-vswitchd',
                'ovsdb-server', 'n-api-meta', 'dstat', 'memory_tracker',
                'file_tracker', 'image-type-reporter', 'horizon')
#: The scale driver's module in nova's tree (nova.virt.itf_fleet).
DRIVER_MODULE = 'itf_fleet'
#: Seconds: nova-compute's periodic walk over every node, once a day.
RESOURCE_INTERVAL = 86400
SERVICE_DOWN_TIME = 300


def fleet_facts(counts):
    """local.conf's variables for a fleet of ``counts`` ({group: nodes}),
    merged over the gate job's."""
    services = {name: False for name in SERVICES_OFF}
    nodes = sum(counts.values())
    local_conf = {
        '$NOVA_CONF': {
            'DEFAULT': {'service_down_time': SERVICE_DOWN_TIME},
            'scheduler': {'workers': 1,
                          'max_placement_results': max(nodes, 1000)},
            'quota': {'instances': -1, 'cores': -1, 'ram': -1},
        },
        '$NOVA_CPU_CONF': {
            'DEFAULT': {'update_resources_interval': RESOURCE_INTERVAL,
                        'service_down_time': SERVICE_DOWN_TIME},
            'compute': {'resource_provider_association_refresh': 0},
        },
    }
    for i, group in enumerate(shape.GROUPS, start=1):
        arch_trait = (shape.ARCH_TRAITS[group.architecture]
                      if group.nova_reports_architecture else '')
        local_conf['$NOVA_FAKE_CONF-%d' % i] = {
            'DEFAULT': {'compute_driver': DRIVER_MODULE + '.FleetDriver'},
            'compute': {'image_type_exclude_list':
                        ','.join(group.excluded)},
            'fleet_driver': {'node_count': counts[group.name],
                             'node_prefix': shape.node_prefix(group.name),
                             'architecture': group.architecture,
                             'architecture_trait': arch_trait},
            # The gate job's reporter settings for its fake nodes: this
            # fleet's reporters have their own (reporters.py).
            'virt_capabilities': {'custom_traits': ''},
        }
    return {
        'devstack_localrc': {
            'NUMBER_FAKE_NOVA_COMPUTE': len(shape.GROUPS),
            'IMAGE_TYPE_TEMPEST_RESERVED_TRAIT': '',
            'IMAGE_TYPE_TEMPEST_FAMILY': '',
        },
        'devstack_services': services,
        'devstack_plugins': {gate.PLUGIN_NAME: 'file://' + gate.PLUGIN_DIR},
        'devstack_local_conf': {'post-config': local_conf},
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python3 -m benchmarks.fleet.localconf',
        description='Write the fleet cloud\'s local.conf.')
    for name in ('devstack', 'tempest', 'path', 'host_ip', 'image_url',
                 'git_base', 'nodes'):
        parser.add_argument(name)
    args = parser.parse_args(argv)
    variables = gate.render_localconf(
        args.devstack, args.tempest, args.path, args.host_ip,
        args.image_url, args.git_base,
        fleet_facts(shape.node_counts(int(args.nodes))))
    print(json.dumps(variables))
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except gate.GateError as exc:
        print('benchmarks.fleet.localconf: %s' % exc, file=sys.stderr)
        sys.exit(1)
