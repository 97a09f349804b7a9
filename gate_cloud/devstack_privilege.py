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

"""Least privilege on the devstack cloud: the ``service`` role is enough.

Run on the node by ``devstack_job``. devstack gives its service users
``admin`` as well (``create_service_user``), so the phase makes its own
(``SERVICE_ONLY``, ``READER``: one role each on project ``service``,
removed at the end, pass or fail) and holds the reporter's sync and
removal, and ``image-type-filter status``, to what gate.rst says: none of
the first user's requests refused in Placement's log, status's table for
it and one line naming the role (exit 2) for the reader, and no journal
line saying "needs the service role".
"""

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile

from gate_cloud import GateError
from gate_cloud import devstack_node as node

ROLE = 'service'
#: The line a user without the role gets, and its exit code.
NEEDS_ROLE = 'needs the service role (or admin)'
REFUSED_EXIT = 2

SERVICE_ONLY = 'gate-service-only'
READER = 'gate-reader'
PROJECT = 'service'
REPORTER_UNIT = 'devstack@image-type-reporter-1.service'
CLI_TIMEOUT = 300
#: The user devstack runs the reporter as.
STACK_USER = 'stack'


def make_user(cloud, name, password, role_name):
    """A user with ``role_name`` alone on project ``service``."""
    def identity(method, path, body=None):
        return cloud.call('identity', method, path, body)[2]
    user = identity('POST', '/users', {'user': {
        'name': name, 'domain_id': 'default', 'password': password}})['user']
    project = identity('GET', '/projects?name=%s' % PROJECT)['projects'][0]
    role = identity('GET', '/roles?name=%s' % role_name)['roles'][0]
    identity('PUT', '/projects/%s/users/%s/roles/%s' % (
        project['id'], user['id'], role['id']))


def remove_users(cloud):
    for name in (SERVICE_ONLY, READER):
        for user in cloud.call('identity', 'GET', '/users?name=%s'
                               % name)[2]['users']:
            cloud.call('identity', 'DELETE', '/users/%s' % user['id'])


def placement_as(directory, name, password, auth_url):
    """The ``[placement]`` user ``name`` and, apart from the host's, a
    reporter name of its own; the stack user's alone (a password)."""
    path = os.path.join(directory, 'placement-%s.conf' % name)
    with open(path, 'w') as f:
        f.write('[placement]\nusername = %s\npassword = %s\n'
                'project_name = %s\nauth_url = %s\n'
                '[virt_capabilities]\nreporter_name = %s\n'
                % (name, password, PROJECT, auth_url, name))
    shutil.chown(path, STACK_USER, STACK_USER)
    return path


def clouds_yaml(directory, password, auth_url):
    """Both users' clouds.yaml, written as JSON (which YAML reads)."""
    users = {name: {'identity_api_version': 3, 'auth': {
        'auth_url': auth_url, 'username': name, 'password': password,
        'project_name': PROJECT, 'user_domain_id': 'default',
        'project_domain_id': 'default'}} for name in (SERVICE_ONLY, READER)}
    path = os.path.join(directory, 'clouds.yaml')
    with open(path, 'w') as f:
        json.dump({'clouds': users}, f)
    return path


def status(clouds, entry):
    """(exit code, stdout, stderr) of ``image-type-filter status``."""
    proc = subprocess.run(
        ['%s/image-type-filter' % node.VENV_BIN, 'status', '--os-cloud',
         entry, '-f', 'json'],
        env={'OS_CLIENT_CONFIG_FILE': clouds, 'PATH': '/usr/bin:/bin',
             'HOME': '/root'}, capture_output=True, text=True,
        timeout=CLI_TIMEOUT)
    return proc.returncode, proc.stdout, proc.stderr


def reporter_problems(records):
    """Placement's request log lines of ``SERVICE_ONLY``: some, none
    refused."""
    mine = [m for _, m in records if ' %s]' % SERVICE_ONLY in m
            and ' status: ' in m]
    if not mine:
        return ['Placement logged no request by %s' % SERVICE_ONLY]
    return ['Placement refused %s: %s' % (SERVICE_ONLY, m[-160:])
            for m in mine if ' status: 401' in m or ' status: 403' in m]


def status_problems(reporter, reader):
    """``reporter`` and ``reader``: (exit, stdout, stderr) of status."""
    problems = []
    code, out, err = reporter
    try:
        checks = json.loads(out)
    except ValueError:
        checks = None
    # Its exit code is the checks' verdict (2: a check failed, as one may
    # on a cloud with a node reporting no image type); refused, it would
    # print no table and name the role.
    if NEEDS_ROLE in err or not isinstance(checks, list) or not checks \
            or not all('check' in c for c in checks):
        problems.append('status with %s alone: exit %s, no table (%s)' % (
            ROLE, code, (err.strip() or out.strip())[-200:]))
    code, out, err = reader
    said = [line for line in err.splitlines() if line.strip()]
    if code != REFUSED_EXIT or len(said) != 1 or NEEDS_ROLE not in said[0] \
            or out.strip():
        problems.append('status as a reader: exit %s, %d line(s) %s; wanted '
                        'exit %d and one line naming the role' % (
                            code, len(said), said[:3], REFUSED_EXIT))
    return problems


def run():
    cloud = node.Cloud()
    password = secrets.token_urlsafe(18)
    auth_url = cloud.auth_url
    problems = []
    remove_users(cloud)  # a kept cloud's earlier run
    make_user(cloud, SERVICE_ONLY, password, 'service')
    make_user(cloud, READER, password, 'reader')
    try:
        with tempfile.TemporaryDirectory(prefix='gate-privilege-') as tmp:
            shutil.chown(tmp, STACK_USER, STACK_USER)
            mark = node.journal(node.PLACEMENT)[0]
            argv = ['runuser', '-u', STACK_USER, '--',
                    '%s/virt-capabilities' % node.VENV_BIN]
            configs = node.config_files(node.unit_argv(REPORTER_UNIT)) + [
                placement_as(tmp, SERVICE_ONLY, password, auth_url)]
            files = [a for f in configs for a in ('--config-file', f)]
            # report, then remove: the extra config file makes this a
            # reporter of its own name in the shared state file, whose
            # records would keep its traits on the provider for ever.
            for command in ('report', 'remove'):
                proc = subprocess.run(argv + [command] + files,
                                      capture_output=True, text=True,
                                      timeout=CLI_TIMEOUT)
                if proc.returncode != 0:
                    problems.append('the reporter\'s %s as %s: exit %d: %s'
                                    % (command, SERVICE_ONLY,
                                       proc.returncode,
                                       proc.stderr.strip()[-300:]))
            problems += reporter_problems(node.journal(node.PLACEMENT,
                                                       mark)[1])
            clouds = clouds_yaml(tmp, password, auth_url)
            problems += status_problems(
                status(clouds, SERVICE_ONLY), status(clouds, READER))
    finally:
        remove_users(cloud)
    saying = [line for line in node.run(
        ['journalctl', '-o', 'cat', '--no-pager']).splitlines()
        if NEEDS_ROLE in line]
    if saying:
        problems.append('the journal says "%s": %s' % (
            NEEDS_ROLE, saying[0][-200:]))
    if problems:
        raise GateError('least privilege: %s' % '; '.join(problems))
    print('[privilege] the reporter synced as a user with service alone, '
          'none refused; status with service alone: its table; as a '
          'reader: exit %d naming the role' % REFUSED_EXIT,
          flush=True)


if __name__ == '__main__':
    sys.exit(node.phase_main('privilege', run))
