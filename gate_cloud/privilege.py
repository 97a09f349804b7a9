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

"""Least privilege, shown in the running cloud.

Every trait reporter runs as a Keystone user of its own, and
nova-scheduler's ``[placement]`` as one of its own, each with the
``service`` role alone in project ``service`` (``USERS`` of
``services/reporters.py``, ``ironic_compute.py``, ``nova_scheduler.py``).
This phase shows that this is all they have and all they need:

* Keystone holds exactly that one role assignment for each;
* Keystone's own record of authentications (``keystone_audit.py``) has
  each of them authenticated by its program (``virt-capabilities``,
  ``nova-scheduler``) and never refused;
* Placement's access log has each reporter's requests made as its own
  user with ``service`` alone, and nova-scheduler's allocation candidate
  queries and its start-up trait writes with ``service`` alone, none
  refused (403); the ironic reporter's writes went to Ironic, where the
  reserved node carries its trait (``reserved_ironic.py``);
* no log of the cloud holds "needs the service role";
* ``image-type-filter status`` as a user with ``service`` alone (as the
  reporters have it) prints its checks, and as a user with only
  ``reader`` exits 2 with one line naming the role it needs.
"""

import json
import os
import pathlib
import subprocess

from gate_cloud import access_log
from gate_cloud import inifile
from gate_cloud import keystone_audit
from gate_cloud import layout
from gate_cloud.processes import GateError
from gate_cloud.services import ironic_compute
from gate_cloud.services import keystone
from gate_cloud.services import nova_compute
from gate_cloud.services import nova_scheduler
from gate_cloud.services import reporters

ROLE = 'service'
#: The line a user without the role gets, and its exit code.
NEEDS_ROLE = 'needs the service role (or admin)'
REFUSED_EXIT = 2
READER = 'gate-reader'
#: A user with ``service`` alone, as the reporters' are, for the operator
#: commands the phase runs (a reporter's own user would have its tokens
#: counted as the reporter's).
SERVICE_ONLY = 'gate-service-only'
#: The programs, first in their keystoneauth1 user agents.
REPORTER = 'virt-capabilities'
SCHEDULER = 'nova-scheduler'
CLOUDS = 'clouds-privilege.yaml'
CLI_TIMEOUT = 300


def service_users():
    """{user: the program that must be the only one authenticating as it}:
    the users with ``service`` alone."""
    out = {reporters.user(c['host']): REPORTER
           for c in nova_compute.COMPUTES}
    out[ironic_compute.REPORTER_USER] = REPORTER
    out[nova_scheduler.PLACEMENT_USER] = SCHEDULER
    return out


def assignments(admin, user_name):
    """(scope, role) of each role assignment of a user."""
    users = admin.get(keystone.AUTH_URL + '/users?name=%s' % user_name)[
        'users']
    if not users:
        raise GateError('Keystone has no user %s' % user_name)
    found = admin.get(keystone.AUTH_URL + '/role_assignments?user.id=%s'
                      '&include_names=true' % users[0]['id'])[
                          'role_assignments']
    out = set()
    for a in found:
        scope = a.get('scope') or {}
        where = ('project:%s' % scope['project']['name'] if 'project' in
                 scope else 'system' if 'system' in scope else
                 'domain:%s' % (scope.get('domain') or {}).get('name'))
        out.add((where, a['role']['name']))
    return out


def access_problems(requests, users):
    """What in Placement's access log shows a user of ``users`` with more
    than ``service``, or refused; and which of them made no request
    (``users``: {user: must it have made requests})."""
    problems, seen = [], set()
    for r in requests:
        if r.user not in users:
            continue
        seen.add(r.user)
        if r.roles != {ROLE}:
            problems.append('%s %s %s as %s with roles %s' % (
                r.method, r.path, r.status, r.user, sorted(r.roles)))
        if r.status in (401, 403):
            problems.append('%s %s refused (%d) to %s' % (
                r.method, r.path, r.status, r.user))
    for user, must in sorted(users.items()):
        if must and user not in seen:
            problems.append('%s made no request to Placement' % user)
    return problems


def scheduler_problems(requests):
    """nova-scheduler's own user: its queries and its start-up trait
    writes, with ``service`` alone."""
    mine = [r for r in requests if r.user == nova_scheduler.PLACEMENT_USER]
    problems = []
    if not any(r.path == access_log.CANDIDATES for r in mine):
        problems.append('no allocation candidates query by %s'
                        % nova_scheduler.PLACEMENT_USER)
    if not any(r.method == 'PUT' and r.path == '/traits/%s'
               % layout.RESERVED_TRAIT and r.status in (201, 204)
               for r in mine):
        problems.append('no PUT /traits/%s by %s (nova-scheduler makes the '
                        'reserved traits at start)' % (
                            layout.RESERVED_TRAIT,
                            nova_scheduler.PLACEMENT_USER))
    return problems


def audit_problems(authentications, users):
    """Each user of ``users`` ({user: program}) authenticated, by its
    program, and never refused."""
    problems = []
    for user, program in sorted(users.items()):
        mine = [a for a in authentications if a.user == user]
        if not any(a.success for a in mine):
            problems.append('Keystone never authenticated %s' % user)
        failed = [a for a in mine if not a.success]
        if failed:
            problems.append('Keystone refused %s %d time(s)' % (
                user, len(failed)))
        others = sorted({a.program for a in mine if a.success}
                        - {program})
        if others:
            problems.append('%s authenticated by %s, not only %s' % (
                user, others, program))
    return problems


def logs_saying(words, root=None):
    """Every file under the cloud's logs holding ``words``."""
    found = []
    for path in sorted(pathlib.Path(root or layout.path('logs')).rglob('*')):
        if path.is_file():
            with open(path, 'rb') as f:
                if words.encode() in f.read():
                    found.append(str(path))
    return found


def clouds_yaml(creds, users):
    """clouds.yaml (private) with an entry per user, project service."""
    lines = ['clouds:']
    for name in users:
        lines += ['  %s:' % name, '    region_name: %s' % layout.REGION,
                  '    identity_api_version: 3', '    auth:',
                  '      auth_url: %s' % keystone.AUTH_URL,
                  '      username: %s' % name,
                  '      password: %s' % json.dumps(
                      creds['service_password']),
                  '      project_name: %s' % keystone.SERVICE_PROJECT,
                  '      user_domain_name: Default',
                  '      project_domain_name: Default']
    return inifile.write(layout.path(CLOUDS), '\n'.join(lines) + '\n')


def status(cloud, entry):
    """(exit code, stdout, stderr) of ``image-type-filter status`` with a
    clouds.yaml entry."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith('OS_') and not k.lower().endswith('_proxy')}
    env['OS_CLIENT_CONFIG_FILE'] = str(layout.path(CLOUDS))
    argv = [str(pathlib.Path(cloud['venv']) / 'bin' / 'image-type-filter'),
            'status', '--os-cloud', entry, '-f', 'json']
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True,
                              timeout=CLI_TIMEOUT, cwd=str(layout.STATE))
    except subprocess.TimeoutExpired:
        raise GateError('status --os-cloud %s: no answer in %d s'
                        % (entry, CLI_TIMEOUT)) from None
    return proc.returncode, proc.stdout, proc.stderr


def make_user(admin, creds, name, role_name):
    """A user with ``role_name`` alone on project service (made once)."""
    users = admin.get(keystone.AUTH_URL + '/users?name=%s' % name)['users']
    if users:
        user = users[0]
    else:
        user = admin.post(keystone.AUTH_URL + '/users', {'user': {
            'name': name, 'domain_id': 'default',
            'password': creds['service_password']}})['user']
    project = admin.get(keystone.AUTH_URL + '/projects?name=%s'
                        % keystone.SERVICE_PROJECT)['projects'][0]
    role = admin.get(keystone.AUTH_URL + '/roles?name=%s'
                     % role_name)['roles'][0]
    admin.put(keystone.AUTH_URL + '/projects/%s/users/%s/roles/%s' % (
        project['id'], user['id'], role['id']))


def status_problems(reporter, reader):
    """``reporter`` and ``reader``: (exit, stdout, stderr) of status."""
    problems = []
    code, out, err = reporter
    try:
        checks = json.loads(out)
    except ValueError:
        checks = None
    # Its exit code is the checks' verdict (2: a check failed, as one may
    # on this cloud: fake-noraw reports no image type); refused, it would
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


def run(cloud, ctx):
    admin = ctx.admin
    users = service_users()
    problems = []
    for user in sorted(users):
        found = assignments(admin, user)
        if found != {('project:%s' % keystone.SERVICE_PROJECT, ROLE)}:
            problems.append('%s holds %s, only %s on project %s wanted' % (
                user, sorted(found), ROLE, keystone.SERVICE_PROJECT))
    problems += audit_problems(keystone_audit.read(), users)
    requests = access_log.since('placement')
    placement_users = {u: True for u, program in users.items()
                       if program == REPORTER}
    placement_users[ironic_compute.REPORTER_USER] = False
    placement_users[nova_scheduler.PLACEMENT_USER] = True
    problems += access_problems(requests, placement_users)
    problems += scheduler_problems(requests)
    saying = logs_saying('needs the service role')
    if saying:
        problems.append('"needs the service role" in %s' % ', '.join(saying))
    make_user(admin, ctx.creds, SERVICE_ONLY, ROLE)
    make_user(admin, ctx.creds, READER, 'reader')
    clouds_yaml(ctx.creds, [SERVICE_ONLY, READER])
    problems += status_problems(status(cloud, SERVICE_ONLY),
                                status(cloud, READER))
    if problems:
        raise GateError('least privilege: %s' % '; '.join(problems))
    print('[privilege] %d users with %s alone, each authenticated by its '
          'program, none refused; status with %s alone: its table; as a '
          'reader: exit %d naming the role' % (len(users), ROLE, ROLE,
                                               REFUSED_EXIT), flush=True)
    return {'service_only_users': sorted(users)}
