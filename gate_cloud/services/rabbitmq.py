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

"""RabbitMQ: a private broker with its own epmd, loopback only, stopped by
pid (RabbitMQ would start an epmd that outlives it)."""

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes

NAME = 'rabbitmq'
PORT = 5672
EPMD_PORT = 4369
DIST_PORT = 25672
PORTS = {'rabbitmq': PORT, 'epmd': EPMD_PORT, 'rabbitmq-dist': DIST_PORT}
DEBIAN = ('rabbitmq-server',)
PYPI = ()
NEEDS = ()
EPMD = 'epmd'


def transport_url(creds):
    return 'rabbit://%s:%s@%s:%d/' % (
        creds['rabbit_user'], creds['rabbit_password'], layout.HOST, PORT)


def base():
    return layout.path('rabbitmq')


def env():
    b = base()
    out = layout.env_for_services()
    out.update({
        'HOME': str(b),  # its Erlang cookie stays private
        'RABBITMQ_CONF_ENV_FILE': str(b / 'rabbitmq-env.conf'),
        'RABBITMQ_CONFIG_FILE': str(b / 'rabbitmq'),
        'RABBITMQ_ENABLED_PLUGINS_FILE': str(b / 'enabled_plugins'),
        'RABBITMQ_MNESIA_BASE': str(b / 'mnesia'),
        'RABBITMQ_LOG_BASE': str(layout.path('logs', 'rabbitmq')),
        'RABBITMQ_PID_FILE': str(b / 'rabbitmq.pid'),
        'RABBITMQ_NODENAME': 'gate@localhost',
        'RABBITMQ_NODE_IP_ADDRESS': layout.HOST,
        'RABBITMQ_NODE_PORT': str(PORT),
        'RABBITMQ_DIST_PORT': str(DIST_PORT),
        'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS':
            '-kernel inet_dist_use_interface {127,0,0,1}',
        'ERL_EPMD_ADDRESS': layout.HOST,
        'ERL_EPMD_PORT': str(EPMD_PORT),
    })
    return out


def configure(cloud):
    b = base()
    (b / 'mnesia').mkdir(parents=True, exist_ok=True)
    layout.path('logs', 'rabbitmq').mkdir(parents=True, exist_ok=True)
    inifile.write(b / 'rabbitmq-env.conf', '')
    inifile.write(b / 'enabled_plugins', '[].\n')
    inifile.write(b / 'rabbitmq.conf', '\n'.join([
        'listeners.tcp.default = %s:%d' % (layout.HOST, PORT),
        'loopback_users.guest = false',
        'default_user = %s' % cloud.creds['rabbit_user'],
        'default_pass = %s' % cloud.creds['rabbit_password'],
        'disk_free_limit.absolute = 50MB', '']))
    cookie = b / '.erlang.cookie'
    cookie.unlink(missing_ok=True)  # written read-only
    inifile.write(cookie, cloud.creds['erlang_cookie'], mode=0o400)


def start(cloud):
    """Our own epmd first (if it is not running), then the broker."""
    if not processes.pid_of(EPMD):
        epmd = processes.start(EPMD, [
            'epmd', '-address', layout.HOST, '-port', str(EPMD_PORT)],
            env=env())
        processes.wait_for(EPMD, processes.port_open(EPMD_PORT), epmd)
    processes.start(NAME, ['/usr/lib/rabbitmq/bin/rabbitmq-server'],
                    env=env(), log=_log())


def wait(cloud):
    processes.wait_for(NAME, processes.port_open(PORT),
                       processes.started(NAME), log=_log())


def stop(cloud):
    """The broker; epmd stays for the next start."""
    processes.stop(NAME, grace=60)


def teardown(cloud):
    processes.stop(EPMD)


def _log():
    return layout.path('logs', 'rabbitmq-server.log')
