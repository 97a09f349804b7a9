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

"""Keystone: identity, fernet tokens, under gunicorn; the admin, the
``service`` project, the roles, and every service's users and catalog
entries (``USERS``, ``CATALOG`` in each service's module)."""

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import wsgi_server
from gate_cloud.services import mariadb

NAME = 'keystone'
PORT = 5000
PORTS = {'keystone': PORT}
DEBIAN = ()
PYPI = ('keystone', 'gunicorn', 'PyMySQL')
NEEDS = ('mariadb',)
DATABASES = ('keystone',)
URL = layout.url(PORT, '/v3')
#: The identity endpoint: what every client authenticates against.
AUTH_URL = URL
CATALOG = {'identity': ('keystone', URL)}
#: The roles made beside ``admin`` (keystone-manage bootstrap's).
ROLES = ('service', 'reader', 'member')
#: The project service users live in.
SERVICE_PROJECT = 'service'
APP = 'keystone.wsgi.api:application'
#: Seconds a token lives (Keystone's default is 3600). Short, so that every
#: long-running client renews its token at least once in a gate run and
#: the figures can measure the reporters' steady rate from renewals
#: (``figures.py``); well above the two minutes before its end at which
#: keystoneauth1 renews a token, or every request would fetch one.
TOKEN_EXPIRATION = 600
#: Keystone says who authenticated, when and with which program: its CADF
#: ``identity.authenticate`` notifications (which it leaves out by
#: default), through oslo.messaging's log driver into its own log
#: (``keystone_audit.py`` reads them).
AUDIT = {'DEFAULT': {'notification_opt_out': 'identity.authenticate.pending'},
         'oslo_messaging_notifications': {'driver': 'log'}}


def conf_dir():
    return layout.path('keystone')


def conf_path():
    return conf_dir() / 'keystone.conf'


def password_auth(username, password, extra=None):
    """A keystoneauth password section, as a service's config holds it."""
    section = {
        'auth_type': 'password',
        'auth_url': AUTH_URL,
        'username': username,
        'password': password,
        'user_domain_name': 'Default',
        'project_name': SERVICE_PROJECT,
        'project_domain_name': 'Default',
        'region_name': layout.REGION,
    }
    section.update(extra or {})
    return section


def authtoken(creds, user):
    """keystonemiddleware's [keystone_authtoken] for an API service."""
    auth = password_auth(user, creds['service_password'])
    del auth['region_name']
    auth.update({'www_authenticate_uri': AUTH_URL,
                 'memcached_servers': '', 'service_token_roles_required':
                 'True', 'http_connect_timeout': '10'})
    return auth


def log_file():
    return layout.path('logs', 'keystone-app.log')


def conf(creds):
    keys = conf_dir()
    return inifile.merge({
        'DEFAULT': {'log_file': str(log_file()), 'debug': 'False'},
        'database': {'connection': mariadb.db_url('keystone', creds)},
        'token': {'provider': 'fernet',
                  'expiration': str(TOKEN_EXPIRATION)},
        'fernet_tokens': {'key_repository': str(keys / 'fernet-keys')},
        'fernet_receipts': {'key_repository': str(keys / 'fernet-keys')},
        'credential': {'key_repository': str(keys / 'credential-keys')},
    }, AUDIT)


def configure(cloud):
    inifile.write_conf(conf_path(), conf(cloud.creds))


def _manage(cloud, *args, env=None):
    processes.run('keystone-manage %s' % args[0], [
        cloud.bin(NAME, 'keystone-manage'), '--config-file', conf_path()]
        + list(args), env=env or cloud.env(NAME), timeout=900)


def bootstrap(cloud):
    """Keys (once), the schema (synced to this series), the admin."""
    for keys in ('fernet-keys', 'credential-keys'):
        (conf_dir() / keys).mkdir(mode=0o700, exist_ok=True)
    if not any((conf_dir() / 'fernet-keys').iterdir()):
        _manage(cloud, 'fernet_setup', '--keystone-user', 'root',
                '--keystone-group', 'root')
        _manage(cloud, 'credential_setup', '--keystone-user', 'root',
                '--keystone-group', 'root')
    _manage(cloud, 'db_sync')
    env = cloud.env(NAME)
    # Through the environment: no password on a command line.
    env['OS_BOOTSTRAP_PASSWORD'] = cloud.creds['admin_password']
    _manage(cloud, 'bootstrap', '--bootstrap-username', 'admin',
            '--bootstrap-project-name', 'admin', '--bootstrap-role-name',
            'admin', '--bootstrap-service-name', 'keystone',
            '--bootstrap-region-id', layout.REGION,
            '--bootstrap-admin-url', AUTH_URL,
            '--bootstrap-public-url', AUTH_URL,
            '--bootstrap-internal-url', AUTH_URL, env=env)


def start(cloud):
    wsgi_server.start(cloud, NAME, PORT, APP, 'OS_KEYSTONE_CONFIG_DIR',
                      conf_dir())


def wait(cloud):
    wsgi_server.wait(NAME, URL)


def stop(cloud):
    processes.stop(NAME)


def populate(cloud):
    """The ``service`` project and roles, each service's ``USERS`` (with
    the roles it names) and ``CATALOG`` entries; what exists already is
    left as it is."""
    admin = cloud.admin
    project = _one(admin, '/projects?name=%s' % SERVICE_PROJECT, 'projects')
    if project is None:
        project = admin.post(AUTH_URL + '/projects', {'project': {
            'name': SERVICE_PROJECT, 'domain_id': 'default'}})['project']
    roles = {}
    for name in ('admin',) + ROLES:
        role = _one(admin, '/roles?name=%s' % name, 'roles')
        if role is None:
            role = admin.post(AUTH_URL + '/roles',
                              {'role': {'name': name}})['role']
        roles[name] = role
    for svc in cloud.services:
        for user_name, role_names in getattr(svc, 'USERS', {}).items():
            user = _one(admin, '/users?name=%s' % user_name, 'users')
            if user is None:
                user = admin.post(AUTH_URL + '/users', {'user': {
                    'name': user_name, 'domain_id': 'default',
                    'password': cloud.creds['service_password']}})['user']
            for role_name in role_names:
                admin.put(AUTH_URL + '/projects/%s/users/%s/roles/%s'
                          % (project['id'], user['id'],
                             roles[role_name]['id']))
        for stype, (name, url) in getattr(svc, 'CATALOG', {}).items():
            if svc.NAME == NAME:
                continue  # keystone-manage bootstrap made it
            if _one(admin, '/services?type=%s' % stype, 'services'):
                continue
            entry = admin.post(AUTH_URL + '/services', {'service': {
                'name': name, 'type': stype}})['service']
            for interface in ('public', 'internal', 'admin'):
                admin.post(AUTH_URL + '/endpoints', {'endpoint': {
                    'service_id': entry['id'], 'interface': interface,
                    'region_id': layout.REGION, 'url': url}})


def _one(admin, query, key):
    found = admin.get(AUTH_URL + query)[key]
    return found[0] if found else None
