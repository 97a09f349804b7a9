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

"""Placement, under gunicorn, with Keystone auth."""

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import series as series_mod
from gate_cloud import wsgi_server
from gate_cloud.processes import GateError
from gate_cloud.services import keystone
from gate_cloud.services import mariadb

NAME = 'placement'
PORT = 8778
PORTS = {'placement': PORT}
DEBIAN = ()
PYPI = ('openstack-placement', 'gunicorn', 'PyMySQL')
NEEDS = ('mariadb',)
DATABASES = ('placement',)
USERS = {'placement': ('admin', 'service')}
URL = layout.url(PORT)
CATALOG = {'placement': ('placement', URL)}
APP = 'placement.wsgi.api:application'


def conf_dir():
    return layout.path('placement')


def conf(creds):
    return {
        'DEFAULT': {'log_file': str(layout.path('logs',
                                                'placement-app.log'))},
        'api': {'auth_strategy': 'keystone'},
        'placement_database': {'connection': mariadb.db_url('placement',
                                                            creds)},
        'keystone_authtoken': keystone.authtoken(creds, 'placement'),
    }


def configure(cloud):
    inifile.write_conf(conf_dir() / 'placement.conf', conf(cloud.creds))


def bootstrap(cloud):
    processes.run('placement-manage db sync', [
        cloud.bin(NAME, 'placement-manage'), '--config-file',
        conf_dir() / 'placement.conf', 'db', 'sync'], env=cloud.env(NAME),
        timeout=900)


def upgrade_check(cloud, series):
    """``placement-status upgrade check`` from ``series``, before
    Placement moves to it (Placement's upgrade notes): 0 ready, 1
    warnings; anything else stops the upgrade."""
    code, output = processes.run_for_status(
        'placement-status upgrade check', [
            series_mod.venv_bin(series, 'placement-status'), '--config-file',
            conf_dir() / 'placement.conf', 'upgrade', 'check'],
        env=layout.env_for_services(series_mod.venv(series)), timeout=300)
    if code not in (0, 1):
        raise GateError('placement-status upgrade check (%s) exited %d: %s'
                        % (series, code, output.strip()[-300:]))


def online_data_migrations(cloud):
    """``placement-manage db online_data_migrations``, once every service
    runs the new release."""
    processes.run('placement-manage db online_data_migrations', [
        cloud.bin(NAME, 'placement-manage'), '--config-file',
        conf_dir() / 'placement.conf', 'db', 'online_data_migrations'],
        env=cloud.env(NAME), timeout=900)


def start(cloud):
    wsgi_server.start(cloud, NAME, PORT, APP, 'OS_PLACEMENT_CONFIG_DIR',
                      conf_dir())


def wait(cloud):
    wsgi_server.wait(NAME, URL)


def stop(cloud):
    processes.stop(NAME)
