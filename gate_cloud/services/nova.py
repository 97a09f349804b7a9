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

"""What Nova's services share (no service itself): the common part of
their nova.conf, how one is started, the schema, and "is it up" as Nova's
API says.

Each Nova process has its own nova.conf (``.cloud/nova/<name>.conf``) and
``state_path``, and runs from its own series' virtualenv.
"""

import calendar
import time

from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import glance
from gate_cloud.services import keystone
from gate_cloud.services import mariadb
from gate_cloud.services import network_standin
from gate_cloud.services import rabbitmq

PYPI = ('nova', 'PyMySQL')
#: nova-api's endpoint: every other Nova service is asked about through it.
API_PORT = 8774
API_ROOT = layout.url(API_PORT, '/')
API_URL = layout.url(API_PORT, '/v2.1')
USERS = {'nova': ('admin', 'service')}


def conf_path(name):
    return layout.path('nova', name + '.conf')


def state_path(name):
    return layout.path('nova', name)


def log(name):
    return layout.path('logs', name + '.log')


def common(creds, name):
    """What every Nova process's nova.conf holds; ``name`` picks its log
    and state."""
    state = state_path(name)
    return {
        'DEFAULT': {
            'transport_url': rabbitmq.transport_url(creds),
            'state_path': str(state),
            'log_file': str(layout.path('logs', 'nova-%s-app.log' % name)),
            'heal_instance_info_cache_interval': '-1',
            'my_ip': layout.HOST,
        },
        'api_database': {'connection': mariadb.db_url('nova_api', creds)},
        'database': {'connection': mariadb.db_url('nova_cell0', creds)
                     if name == 'cell0' else mariadb.db_url('nova', creds)},
        'keystone_authtoken': keystone.authtoken(creds, 'nova'),
        'placement': keystone.password_auth('nova', creds['service_password']),
        # Service tokens beside the user's, as Nova requires of every
        # service since 2023.1 (nova-status upgrade check fails without).
        'service_user': service_user(creds),
        'neutron': keystone.password_auth(
            'nova', creds['service_password'],
            {'endpoint_override': network_standin.URL, 'timeout': '30'}),
        'glance': {'endpoint_override': glance.URL,
                   'region_name': layout.REGION},
        'oslo_concurrency': {'lock_path': str(state / 'locks')},
        'vnc': {'enabled': 'False'},
        'wsgi': {'api_paste_config': str(layout.path('nova',
                                                     'api-paste.ini'))},
        'oslo_messaging_rabbit': {'heartbeat_timeout_threshold': '30'},
        # A rolling upgrade's RPC pin (Nova's upgrade guide): each service
        # speaks the compute RPC version of the oldest nova-compute.
        'upgrade_levels': {'compute': 'auto'},
    }


def service_user(creds):
    """[service_user]: keystoneauth's password options (no region: the
    group registers none) and the switch."""
    section = keystone.password_auth('nova', creds['service_password'],
                                     {'send_service_user_token': 'True'})
    del section['region_name']
    return section


def make_state(name):
    (state_path(name) / 'locks').mkdir(parents=True, exist_ok=True)


def start_service(cloud, service, name, binary, conf):
    """``binary --config-file conf`` from ``service``'s virtualenv,
    recorded as ``name``."""
    return processes.start(name, [cloud.bin(service, binary),
                                  '--config-file', conf],
                           env=cloud.env(service), log=log(name))


def manage(cloud, service, conf, *args, timeout=900):
    """``nova-manage`` from ``service``'s virtualenv."""
    processes.run('nova-manage %s' % ' '.join(args[:2]), [
        cloud.bin(service, 'nova-manage'), '--config-file', conf] + list(args),
        env=cloud.env(service), timeout=timeout)


def services(admin, binary, host=None):
    """Nova's service records of ``binary`` (on ``host``), from the
    API."""
    query = '/os-services?binary=%s' % binary
    if host is not None:
        query += '&host=%s' % host
    return admin.get(API_URL + query,
                     headers=rest.COMPUTE_HEADERS)['services']


def wait_reported(cloud, name, binary, host=None):
    """Until a ``binary`` record (on ``host``) is up and was updated after
    process ``name`` started: it runs, and reaches the database and the
    broker."""
    since = processes.started_at(name)
    proc = processes.started(name)

    def probe():
        try:
            found = services(cloud.admin, binary, host)
        except GateError:
            return False
        return any(svc['state'] == 'up' and svc.get('updated_at')
                   and epoch(svc['updated_at']) >= int(since)
                   for svc in found)
    processes.wait_for(name, probe, proc, log=log(name))


def wait_all_reported(cloud, binary, since, deadline):
    """Until every ``binary`` record was updated after ``since`` (epoch
    seconds; strictly after, as records keep whole seconds): each of
    them reached nova-conductor after that moment and got its answer."""
    def probe():
        try:
            found = services(cloud.admin, binary)
        except GateError:
            return False
        return bool(found) and all(
            svc['state'] == 'up' and svc.get('updated_at')
            and epoch(svc['updated_at']) > int(since) for svc in found)
    processes.wait_for('every %s reporting in after %s' % (
        binary, time.strftime('%H:%M:%S', time.localtime(since))), probe,
        deadline=deadline, log=log('nova-conductor'))


def epoch(stamp):
    stamp = stamp.split('.')[0].rstrip('Z')
    return calendar.timegm(time.strptime(stamp, '%Y-%m-%dT%H:%M:%S'))
