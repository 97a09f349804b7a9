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

"""Glance, under gunicorn (gthread), on a file store."""

import shutil

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import wsgi_server
from gate_cloud.services import keystone
from gate_cloud.services import mariadb

NAME = 'glance'
PORT = 9292
PORTS = {'glance': PORT}
DEBIAN = ()
PYPI = ('glance', 'gunicorn', 'PyMySQL')
NEEDS = ('mariadb',)
DATABASES = ('glance',)
USERS = {'glance': ('admin', 'service')}
URL = layout.url(PORT)
CATALOG = {'image': ('glance', URL)}
APP = 'glance.wsgi.api:application'
STORES = ('images', 'staging', 'tasks', 'locks')


def conf_dir():
    return layout.path('glance')


def conf(creds):
    images = conf_dir()
    return {
        'DEFAULT': {
            'log_file': str(layout.path('logs', 'glance-app.log')),
            'enabled_backends': 'fs:file',
            'bind_host': layout.HOST,
            'bind_port': str(PORT),
            'workers': '1',
        },
        'glance_store': {'default_backend': 'fs'},
        'fs': {'filesystem_store_datadir': str(images / 'images')},
        'os_glance_staging_store': {
            'filesystem_store_datadir': str(images / 'staging')},
        'os_glance_tasks_store': {
            'filesystem_store_datadir': str(images / 'tasks')},
        'database': {'connection': mariadb.db_url('glance', creds)},
        'keystone_authtoken': keystone.authtoken(creds, 'glance'),
        'paste_deploy': {'flavor': 'keystone'},
        'oslo_concurrency': {'lock_path': str(images / 'locks')},
    }


def configure(cloud):
    """glance-api.conf, its stores, and the paste file of its series."""
    inifile.write_conf(conf_dir() / 'glance-api.conf', conf(cloud.creds))
    for sub in STORES:
        (conf_dir() / sub).mkdir(parents=True, exist_ok=True)
    shutil.copy(cloud.venv_file(NAME, 'etc/glance/glance-api-paste.ini'),
                conf_dir() / 'glance-api-paste.ini')


def bootstrap(cloud):
    processes.run('glance-manage db_sync', [
        cloud.bin(NAME, 'glance-manage'), '--config-file',
        conf_dir() / 'glance-api.conf', 'db_sync'], env=cloud.env(NAME),
        timeout=900)


def start(cloud):
    wsgi_server.start(cloud, NAME, PORT, APP, 'OS_GLANCE_CONFIG_DIR',
                      conf_dir(), workers=1, worker_class='gthread')


def wait(cloud):
    wsgi_server.wait(NAME, URL)


def stop(cloud):
    processes.stop(NAME)
