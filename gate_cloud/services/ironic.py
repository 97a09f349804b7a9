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

"""Ironic: the Bare Metal API and conductor in one process, Keystone auth,
fake-hardware nodes.

Ironic's single-process command (``ironic``: the conductor with the API
in it, no message bus) from the series' virtualenv, on MariaDB, with only
the ``fake-hardware`` hardware type: its nodes need no machine, yet go
through Ironic's real state machine (manage, provide, deploy, undeploy)
and its real trait API. ``populate`` enrolls ``NODES`` as a system
administrator does (no owner) and makes them ``available``, powered off:
what nova-compute's ironic driver schedules to.

``rbac_service_role_elevated_access``: a user with the ``service`` role in
the ``service`` project acts on every node as a system member would, as
Ironic documents for nova-compute's own user; the ironic node's trait
reporter (``ironic_compute.py``) runs as a user with that role alone.
"""

import uuid

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import glance
from gate_cloud.services import keystone
from gate_cloud.services import mariadb

NAME = 'ironic'
PORT = 6385
PORTS = {'ironic': PORT}
DEBIAN = ()
PYPI = ('ironic', 'PyMySQL')
NEEDS = ('mariadb', 'keystone')
DATABASES = ('ironic',)
USERS = {'ironic': ('admin', 'service')}
URL = layout.url(PORT)
CATALOG = {'baremetal': ('ironic', URL)}
#: Every request the gate makes is at this Bare Metal API microversion
#: (node traits need 1.37; nothing the gate does needs more).
HEADERS = {'X-OpenStack-Ironic-API-Version': '1.37'}
#: The nodes: name -> uuid (fixed, so the other modules know them without
#: asking). The reserved one carries the reserved trait, set by its
#: reporter; the free one takes untagged boots.
NODE_NAMES = ('bm-free', 'bm-trove')
NODES = {name: str(uuid.uuid5(uuid.NAMESPACE_URL, 'gate-cloud/' + name))
         for name in NODE_NAMES}
RESERVED_NODE = 'bm-trove'
#: The resource class the nodes have: Nova's ironic driver reports one
#: unit of CUSTOM_BAREMETAL per node, and a baremetal flavor asks for it.
RESOURCE_CLASS = 'baremetal'
NODE_PROPERTIES = {'cpus': 1, 'memory_mb': 1024, 'local_gb': 10,
                   'cpu_arch': 'x86_64'}
#: fake-hardware's interfaces, the others off: one enabled of each kind,
#: so every node gets it without naming it.
INTERFACES = {
    'bios': 'no-bios', 'boot': 'fake', 'console': 'no-console',
    'deploy': 'fake', 'firmware': 'no-firmware', 'inspect': 'no-inspect',
    'management': 'fake', 'network': 'noop', 'power': 'fake',
    'raid': 'no-raid', 'rescue': 'no-rescue', 'storage': 'noop',
    'vendor': 'no-vendor',
}
#: A node's way to ``available``: (verb, state it then reaches).
PROVIDE = (('manage', 'manageable'), ('provide', 'available'))


def conf_path():
    return layout.path('ironic', 'ironic.conf')


def log_file():
    return layout.path('logs', 'ironic-app.log')


def conf(creds):
    default = {
        'auth_strategy': 'keystone',
        'host': 'gate-conductor',
        'rpc_transport': 'none',
        'enabled_hardware_types': 'fake-hardware',
        'rbac_service_role_elevated_access': 'True',
        # This machine may have less free memory than a conductor wants.
        'minimum_memory_warning_only': 'True',
        'log_file': str(log_file()),
    }
    default.update({'enabled_%s_interfaces' % kind: value
                    for kind, value in INTERFACES.items()})
    return {
        'DEFAULT': default,
        'api': {'host_ip': layout.HOST, 'port': str(PORT)},
        'database': {'connection': mariadb.db_url('ironic', creds)},
        'conductor': {'automated_clean': 'False',
                      'graceful_shutdown_timeout': '5'},
        'dhcp': {'dhcp_provider': 'none'},
        'keystone_authtoken': keystone.authtoken(creds, 'ironic'),
        # A deploy reads the image's properties from Glance, as in a
        # production cloud.
        'glance': keystone.password_auth(
            'ironic', creds['service_password'],
            {'endpoint_override': glance.URL}),
        # No Nova notifications of power changes: nothing here needs them.
        'nova': {'send_power_notifications': 'False'},
        'oslo_concurrency': {'lock_path': str(layout.path('ironic',
                                                          'locks'))},
    }


def configure(cloud):
    inifile.write_conf(conf_path(), conf(cloud.creds))
    layout.path('ironic', 'locks').mkdir(parents=True, exist_ok=True)


def bootstrap(cloud):
    """The schema, upgraded to this series (idempotent)."""
    processes.run('ironic-dbsync upgrade', [
        cloud.bin(NAME, 'ironic-dbsync'), '--config-file', conf_path(),
        'upgrade'], env=cloud.env(NAME), timeout=900)


def start(cloud):
    processes.start(NAME, [cloud.bin(NAME, 'ironic'), '--config-file',
                           conf_path()], env=cloud.env(NAME),
                    log=layout.path('logs', 'ironic.log'))


def client(cloud):
    """The cloud's admin with a system-scoped token: Ironic's system
    administrator, who enrolls nodes."""
    return rest.Client('admin', cloud.creds['admin_password'], system=True)


def api(path):
    return URL + '/v1/' + path


def wait(cloud):
    """Until the API answers through Keystone and the conductor has
    registered fake-hardware (no node can be enrolled before)."""
    admin = client(cloud)

    def probe():
        try:
            drivers = admin.get(api('drivers'), headers=HEADERS)['drivers']
        except GateError:
            return False
        return any(d['name'] == 'fake-hardware' for d in drivers)
    processes.wait_for(NAME, probe, processes.started(NAME),
                       log=log_file())


def node(admin, node_uuid):
    """The node, or None."""
    try:
        return admin.get(api('nodes/%s' % node_uuid), headers=HEADERS)
    except rest.HTTPError as exc:
        if exc.code == 404:
            return None
        raise


def node_traits(admin, node_uuid):
    return sorted(admin.get(api('nodes/%s/traits' % node_uuid),
                            headers=HEADERS)['traits'])


def _wait_node(admin, node_uuid, field, value):
    def probe():
        seen = node(admin, node_uuid)
        if seen and seen.get('last_error') and seen[field] != value:
            raise GateError('ironic node %s: %s' % (node_uuid,
                                                    seen['last_error']))
        return seen is not None and seen[field] == value
    processes.wait_for('ironic node %s %s %s' % (node_uuid, field, value),
                       probe, log=log_file())


def populate(cloud):
    """``NODES``, enrolled once, ``available`` and powered off."""
    admin = client(cloud)
    for name, node_uuid in NODES.items():
        found = node(admin, node_uuid)
        if found is None:
            # Each interface is the one enabled of its kind (``conf``):
            # Ironic gives the node those by default.
            found = admin.post(api('nodes'), {
                'uuid': node_uuid, 'name': name, 'driver': 'fake-hardware',
                'resource_class': RESOURCE_CLASS,
                'properties': NODE_PROPERTIES}, headers=HEADERS)
        for verb, state in PROVIDE:
            if found['provision_state'] in ('available', 'active'):
                break
            if found['provision_state'] == state:
                continue
            admin.put(api('nodes/%s/states/provision' % node_uuid),
                      {'target': verb}, headers=HEADERS)
            _wait_node(admin, node_uuid, 'provision_state', state)
            found = node(admin, node_uuid)
        if found['power_state'] != 'power off':
            admin.put(api('nodes/%s/states/power' % node_uuid),
                      {'target': 'power off'}, headers=HEADERS)
            _wait_node(admin, node_uuid, 'power_state', 'power off')


def stop(cloud):
    processes.stop(NAME)
