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

"""The API services under gunicorn: Keystone, Placement, Glance, nova-api.

Each runs ``gate_cloud/wsgi.py`` (which trims ``sys.argv`` before the
service's oslo.config sees it) from its series' virtualenv; the
application and the variable naming its config directory come from the
service's module.
"""

from gate_cloud import layout
from gate_cloud import processes

#: Each request: its line as sent (the query string as the client encoded
#: it), status, seconds, user agent, the global request id the client sent
#: (nova-scheduler sends its boot's), and the Keystone user and roles
#: keystonemiddleware found in its token (``-`` where there is none).
#: ``gate_cloud/access_log.py`` reads it.
ACCESS_FORMAT = ('%(t)s "%(r)s" %(s)s %(L)s "%(a)s" '
                 '%({x-openstack-request-id}i)s '
                 'user=%({http_x_user_name}e)s roles=%({http_x_roles}e)s')


def log(name):
    return layout.path('logs', name + '.log')


def access_log(name):
    return layout.path('logs', name + '-access.log')


def start(cloud, name, port, app, config_env, config_dir, workers=2,
          worker_class='sync'):
    """gunicorn serving ``app`` (``module:attribute``) on ``port``."""
    env = cloud.env(name)
    env['GATE_WSGI_APP'] = app
    env[config_env] = str(config_dir)
    return processes.start(name, [
        cloud.bin(name, 'gunicorn'), '--bind', '%s:%d' % (layout.HOST, port),
        '--workers', str(workers), '--worker-class', worker_class,
        '--threads', '4' if worker_class == 'gthread' else '1',
        '--timeout', '180', '--graceful-timeout', '5',
        '--access-logfile', str(access_log(name)),
        '--access-logformat', ACCESS_FORMAT,
        '--chdir', str(layout.REPO), 'gate_cloud.wsgi:application'],
        env=env, log=log(name))


def wait(name, url):
    """Until ``url`` answers below 500 (or the server exits)."""
    processes.wait_for(name, processes.http_ok(url),
                       processes.started(name), log=log(name))
