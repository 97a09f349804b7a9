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

"""nova-api, under gunicorn; it makes Nova's schemas and cells."""

import shutil

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import wsgi_server
from gate_cloud.services import mariadb
from gate_cloud.services import nova

NAME = 'nova-api'
PORT = nova.API_PORT
PORTS = {'nova-api': PORT}
DEBIAN = ()
PYPI = nova.PYPI + ('gunicorn',)
NEEDS = ('mariadb',)
DATABASES = ('nova_api', 'nova', 'nova_cell0')
USERS = nova.USERS
URL = nova.API_URL
CATALOG = {'compute': ('nova', URL)}
APP = 'nova.wsgi.osapi_compute:application'
#: Made once per cloud by ``bootstrap``.
CELLS_MADE = 'cells-made'


def conf_dir():
    """OS_NOVA_CONFIG_DIR: its nova.conf and api-paste.ini."""
    return layout.path('nova', 'api-etc')


def conf_path():
    return conf_dir() / 'nova.conf'


def conf(creds):
    return nova.common(creds, 'api')


def configure(cloud):
    inifile.write_conf(conf_path(), conf(cloud.creds))
    paste = cloud.venv_file(NAME, 'etc/nova/api-paste.ini')
    # Where [wsgi] api_paste_config (every Nova process's) and
    # OS_NOVA_CONFIG_DIR point.
    shutil.copy(paste, layout.path('nova', 'api-paste.ini'))
    shutil.copy(paste, conf_dir() / 'api-paste.ini')
    nova.make_state('api')


def bootstrap(cloud):
    """The API and cell databases' schemas (synced to this series); cell0
    and cell1, made once."""
    nova.manage(cloud, NAME, conf_path(), 'api_db', 'sync')
    marker = layout.path('nova', CELLS_MADE)
    if not marker.exists():
        nova.manage(cloud, NAME, conf_path(), 'cell_v2', 'map_cell0',
                    '--database_connection',
                    mariadb.db_url('nova_cell0', cloud.creds))
        nova.manage(cloud, NAME, conf_path(), 'cell_v2', 'create_cell',
                    '--name', 'cell1')
        marker.write_text('')
    nova.manage(cloud, NAME, conf_path(), 'db', 'sync')


def start(cloud):
    wsgi_server.start(cloud, NAME, PORT, APP, 'OS_NOVA_CONFIG_DIR',
                      conf_dir())


def wait(cloud):
    wsgi_server.wait(NAME, nova.API_ROOT)


def stop(cloud):
    processes.stop(NAME)
