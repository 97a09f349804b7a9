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

"""The smallest Keystone role each command needs, against Placement's real
policy.

Placement (real, its 2026 default policy, real keystonemiddleware) checks
the roles of a token from the Keystone-shaped stand-in
(``tests/identity_standin.py`` says why it is not a real Keystone; the
gate cloud runs the commands as Keystone users of a real one). The stand-in
gives a user exactly the roles a test names, none implied. Under the
default policy every request this project makes, reads included, is
``admin`` or ``service`` with a project-scoped token: a user with only
``service`` in the service project runs every command; ``reader`` or
``member`` alone runs none, and gets one line naming the role.

``candidates`` runs the request filters nova-scheduler runs, with their
start-up write (creating the ``[image_isolation]`` reserved trait, as
nova-scheduler does), and the same reads: the filters inside
nova-scheduler need no more than ``service`` on Nova's own credentials.

Last, what a reporter costs Keystone: one token for a service's many
cycles, and each renewal a line it logs.
"""

import pytest

from placement_runner import writes
from tests import helpers
from tests import identity_standin
from tests import tls_cloud
from virt_capabilities import ownership_state

SERVICE = 'lp-service'
ADMIN = 'lp-admin'
#: Roles that are not enough, each alone.
NOT_ENOUGH = ('reader', 'member')
ROLE_LINE = 'needs the service role (or admin) in its project'


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    with tls_cloud.tls_cloud(tmp_path_factory.mktemp('roles')) as found:
        found.add_user(SERVICE, ('service',))
        found.add_user(ADMIN, ('admin',))
        for role in NOT_ENOUGH:
            found.add_user('lp-' + role, (role,))
        yield found


def run(*argv, env=None):
    child = helpers.Child.module(*argv, env=env)
    code = child.finish()
    return code, child.out.text(), [
        line for line in child.err.text().splitlines() if line.strip()]


def node_conf(tmp_path, cloud, user, host, custom='', isolation=''):
    path = tmp_path / ('nova-%s.conf' % user)
    path.write_text(
        '[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = %s\n'
        'state_path = %s\n[virt_capabilities]\nimage_type_traits_owner = '
        'reporter\ncustom_traits = %s\n%s%s'
        % (host, tmp_path, custom, isolation,
           cloud.placement_section(user)))
    return str(path)


def commands(conf):
    """Every command that talks to Placement, with nova.conf's
    credentials."""
    return [
        ['virt_capabilities.cmd.main', 'report', '--config-file', conf],
        ['virt_capabilities.cmd.main', 'report', '--dry-run',
         '--config-file', conf],
        ['virt_capabilities.cmd.main', 'report', '--check',
         '--config-file', conf],
        ['image_type_filter.cmd.main', 'status', '--config-file', conf],
        ['image_type_filter.cmd.main', 'candidates', '--disk-format', 'raw',
         '-f', 'value', '-c', 'name', '--config-file', conf],
    ]


def openstack_credentials(cloud, user):
    return ['--os-auth-url', cloud.identity.auth_url, '--os-username', user,
            '--os-password', user[::-1], '--os-project-name',
            tls_cloud.PROJECT, '--os-user-domain-name', 'Default',
            '--os-project-domain-name', 'Default', '--os-region-name',
            identity_standin.REGION, '--os-cacert', cloud.ca.cafile,
            '--os-cert', cloud.ca.client_certfile, '--os-key',
            cloud.ca.client_keyfile]


def test_the_service_role_alone_runs_every_command(cloud, tmp_path, unique):
    admin = cloud.client(ADMIN)
    host = 'lp-node-' + unique
    provider = writes.create_resource_provider(admin, host)
    uuid = provider['uuid']
    writes.put_inventories(admin, uuid, provider['generation'], {
        'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 8192},
        'DISK_GB': {'total': 100}})
    custom = 'CUSTOM_LP_' + unique.upper()
    reserved = 'CUSTOM_LP_RESERVED_' + unique.upper()
    conf = node_conf(tmp_path, cloud, SERVICE, host, custom=custom,
                     isolation='[image_isolation]\nenabled = True\n'
                               'rules = %s\n' % reserved)
    for argv in commands(conf):
        code, out, lines = run(*argv)
        assert code == 0 or (code in (1, 2) and 'status' in argv), (
            argv, lines)
        assert not [line for line in lines if 'ERROR' in line
                    or 'WARNING' in line], (argv, lines)
        if 'candidates' in argv:
            assert host in out.split(), out
        if 'status' in argv:
            assert 'Placement microversion' in out, out
    # The reporter's writes (a new CUSTOM trait, the provider's traits)
    # and the filters' start-up write (the reserved trait) went through.
    assert custom in admin.get_provider_traits(uuid)[0]
    assert admin.list_traits([reserved]) == {reserved}
    osc = ['openstackclient.shell', *openstack_credentials(cloud, SERVICE)]
    code, out, lines = run(*osc, 'image-type', 'status')
    assert code in (0, 1, 2) and not lines, lines
    assert 'Placement microversion' in out, out
    code, out, lines = run(*osc, 'image-type', 'candidates', '--disk-format',
                           'raw', '-f', 'value', '-c', 'name')
    assert code == 0 and not lines, lines
    assert host in out.split(), out
    # And its undo: the same reads and write.
    code, out, lines = run('virt_capabilities.cmd.main', 'remove',
                           '--config-file', conf)
    assert code == 0 and not [line for line in lines if 'ERROR' in line
                              or 'WARNING' in line], lines
    assert custom not in admin.get_provider_traits(uuid)[0]


@pytest.mark.parametrize('role', NOT_ENOUGH)
def test_a_user_without_the_role_gets_one_line_naming_it(cloud, tmp_path,
                                                         unique, role):
    """Every command for ``reader`` (the role read-only tools are usually
    given); the reporter's write for ``member``."""
    user = 'lp-' + role
    admin = cloud.client(ADMIN)
    host = 'lp-%s-%s' % (role, unique)
    uuid = writes.create_resource_provider(admin, host)['uuid']
    custom = 'CUSTOM_LP_%s' % unique.upper()
    conf = node_conf(tmp_path, cloud, user, host, custom=custom)
    remove = ['virt_capabilities.cmd.main', 'remove', '--config-file', conf]
    # remove works from the state file's records (without them it refuses
    # before any request): as if a reporter with the role had set it.
    ownership_state.OwnershipState(
        str(tmp_path / 'virt_capabilities.json'), name=conf).record(
            uuid, {custom})
    for argv in (commands(conf) + [remove] if role == 'reader'
                 else commands(conf)[:1]):
        code, _, lines = run(*argv)
        assert code == 2, (argv, lines)
        assert len(lines) == 1, (argv, lines)
        assert ROLE_LINE in lines[0] and '(403' in lines[0], lines[0]
    assert admin.get_provider_traits(uuid)[0] == set()
    if role != 'reader':
        return
    code, _, lines = run('openstackclient.shell',
                         *openstack_credentials(cloud, user),
                         'image-type', 'status')
    assert code == 2 and len(lines) == 1, lines
    assert ROLE_LINE in lines[0], lines[0]


def test_a_token_placement_does_not_accept_is_one_line(cloud, tmp_path):
    """401: not a role but the token itself (one this Keystone never
    issued), said as such."""
    path = tmp_path / 'nova.conf'
    path.write_text('[placement]\nauth_type = admin_token\nendpoint = %s\n'
                    'token = never-issued\n%s'
                    % (cloud.placement.endpoint, cloud.tls_lines()))
    code, _, lines = run('image_type_filter.cmd.main', 'candidates',
                         '--disk-format', 'raw', '--config-file', str(path))
    assert code == 2 and len(lines) == 1, lines
    assert 'refused the credentials (401)' in lines[0], lines[0]
    assert 'token is not valid there' in lines[0], lines[0]


def test_a_reporter_service_asks_for_one_token_not_one_a_cycle(
        cloud, tmp_path, unique):
    """Keystone's steady load from a fleet: a service keeps its token
    across cycles (keystoneauth1 renews it only when it nears its end)."""
    user = cloud.add_user('lp-steady-' + unique, ('service',))
    admin = cloud.client(ADMIN)
    host = 'lp-steady-' + unique
    writes.create_resource_provider(admin, host)
    conf = node_conf(tmp_path, cloud, user, host)
    with helpers.Child.module('virt_capabilities.cmd.main', 'report',
                              '--config-file', conf, '--interval',
                              '1') as child:
        child.err.wait_for('sync done', count=3)
        assert cloud.identity.token_requests(user) == 1


def test_each_token_renewal_is_a_debug_line(cloud, tmp_path, unique):
    """Tokens that end within keystoneauth1's two-minute margin are
    renewed before each request: every token but the first is one
    'renewed' line, so renewals can be counted from the reporter's log
    (on the command line, -v shows them)."""
    user = cloud.add_user('lp-short-' + unique, ('service',),
                          token_lifetime=60)
    admin = cloud.client(ADMIN)
    host = 'lp-short-' + unique
    writes.create_resource_provider(admin, host)
    code, _, lines = run('virt_capabilities.cmd.main', '-v', 'report',
                         '--config-file', node_conf(tmp_path, cloud, user,
                                                    host))
    assert code == 0, lines[-5:]
    asked = cloud.identity.token_requests(user)
    assert asked > 2
    assert sum('Keystone token obtained' in line for line in lines) == 1
    assert sum('Keystone token renewed' in line
               for line in lines) == asked - 1
