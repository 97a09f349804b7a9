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

"""nova-compute on Nova's ironic driver, and the trait reporter beside it.

One nova-compute (``[DEFAULT] host = ironic``) whose nodes are the Ironic
nodes of ``ironic.py``: each its own compute node and resource provider,
named by the node's uuid, with one unit of ``CUSTOM_BAREMETAL``. Its
``[compute] resource_provider_association_refresh`` and ``[DEFAULT]
update_resources_interval`` are short, so that nova-compute re-reads its
providers from Placement and pushes its own view of their traits (the
Ironic node's traits, replacing the provider's) within a phase, not after
the production defaults' 300 and 60 s.

The reporter (``virt-capabilities report``) reads the same nova.conf and,
after it, ``reporter-ironic.conf``: its own Keystone user
(``REPORTER_USER``, the ``service`` role alone, for Ironic and Placement
both), so the node-trait writes are proven to need no more. It keeps
``CUSTOM_TROVE`` on the reserved node (``--provider``) as an Ironic node
trait, which nova-compute copies to the provider.
"""

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import ironic
from gate_cloud.services import keystone
from gate_cloud.services import nova
from gate_cloud.services import nova_api

NAME = 'nova-compute-ironic'
HOST = 'ironic'
REPORTER = 'reporter-ironic'
REPORTER_USER = 'virt-capabilities-ironic'
PORTS = {}
DEBIAN = ()
PYPI = nova.PYPI
#: After the other nova-computes: its ``populate`` maps hosts as theirs
#: does (``nova-manage cell_v2 discover_hosts``), which fails when two run
#: at once.
NEEDS = ('rabbitmq', 'keystone', 'placement', 'ironic', 'nova-api',
         'nova-conductor', 'nova-compute')
USERS = dict(nova.USERS, **{REPORTER_USER: ('service',)})
DRIVER = 'ironic.IronicDriver'
#: Seconds: nova-compute's resource update, and how old its cache of a
#: provider's traits may get before the update re-reads them.
UPDATE_INTERVAL = 10
ASSOCIATION_REFRESH = 10
#: The reporter's --interval and --wait, seconds.
REPORTER_INTERVAL = 10
REPORTER_WAIT = 300
STOP_GRACE = 5.0


def conf_path():
    return nova.conf_path('compute-' + HOST)


def reporter_conf_path():
    return nova.conf_path('reporter-' + HOST)


def log_file():
    """nova-compute's oslo.log file, the reporter's too (it follows
    nova.conf's log options), told apart by process id."""
    return layout.path('logs', 'nova-compute-%s-app.log' % HOST)


def reporter_log():
    return layout.path('logs', '%s.log' % REPORTER)


def conf(creds):
    return inifile.merge(nova.common(creds, 'compute-' + HOST), {
        'DEFAULT': {'host': HOST, 'compute_driver': DRIVER,
                    'update_resources_interval': str(UPDATE_INTERVAL)},
        'compute': {'resource_provider_association_refresh':
                    str(ASSOCIATION_REFRESH)},
        'ironic': keystone.password_auth('nova', creds['service_password'],
                                         {'api_retry_interval': '1'}),
        'virt_capabilities': {'image_type_traits_owner': 'nova-compute',
                              'custom_traits': layout.RESERVED_TRAIT},
    })


def reporter_conf(creds):
    """Read after nova.conf: the reporter's own user, for both services
    (the ironic reporter makes no Placement client; its [placement] is
    set so that nothing of it can be nova-compute's)."""
    own = {'username': REPORTER_USER, 'password': creds['service_password']}
    return {'ironic': dict(own), 'placement': dict(own)}


def configure(cloud):
    inifile.write_conf(conf_path(), conf(cloud.creds))
    inifile.write_conf(reporter_conf_path(), reporter_conf(cloud.creds))
    nova.make_state('compute-' + HOST)


def start(cloud):
    nova.start_service(cloud, NAME, NAME, 'nova-compute', conf_path())
    processes.start(REPORTER, [
        cloud.bin(NAME, 'virt-capabilities'), 'report',
        '--config-file', conf_path(), '--config-file', reporter_conf_path(),
        '--provider', ironic.NODES[ironic.RESERVED_NODE],
        '--wait', str(REPORTER_WAIT), '--interval', str(REPORTER_INTERVAL)],
        env=cloud.env(NAME), log=reporter_log())


def wait(cloud):
    """Until every node has its provider in Placement, the reporter has
    put the reserved trait on the reserved Ironic node, and the service
    record is up and updated since the start."""
    node_admin = ironic.client(cloud)
    reserved = ironic.NODES[ironic.RESERVED_NODE]

    def probe():
        for name in (NAME, REPORTER):
            proc = processes.started(name)
            if proc is not None and proc.poll() is not None:
                raise GateError('%s exited with %s; see %s' % (
                    name, proc.returncode, log_file()))
        try:
            have = {p['name'] for p in rest.providers(cloud.admin)}
            if not set(ironic.NODES.values()) <= have:
                return False
            return layout.RESERVED_TRAIT in ironic.node_traits(node_admin,
                                                               reserved)
        except GateError:
            return False
    processes.wait_for('ironic nodes in Placement, %s on node %s'
                       % (layout.RESERVED_TRAIT, ironic.RESERVED_NODE),
                       probe, log=log_file())
    # The providers outlive a restart: the proof this nova-compute runs
    # (and, after an upgrade, reports its new service version, which
    # nova-scheduler's OWNER_NOVA rule reads) is its service record,
    # updated since it started.
    nova.wait_reported(cloud, NAME, 'nova-compute', host=HOST)


def populate(cloud):
    """Map the host to cell1: the scheduler sends nothing to it before."""
    nova.manage(cloud, nova_api.NAME, nova_api.conf_path(), 'cell_v2',
                'discover_hosts')


def stop(cloud):
    processes.stop_many([REPORTER, NAME], grace=STOP_GRACE)
