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

"""Keystone and Placement behind TLS with a private CA.

One real Placement for the module, on HTTPS and requiring a client
certificate (gunicorn's ``cert_reqs``), with its real keystonemiddleware
validating tokens at a Keystone-shaped stand-in on HTTPS
(``tests/tls_cloud.py``; why a stand-in: ``tests/identity_standin.py``).
Certificates come from a CA made for the module. The commands read the
``[placement]`` section a compute node would have, and every request
they make, the start-up probe of ``auth_url`` and the diagnosis of a
failed version discovery included, must honour ``cafile``, ``insecure``,
``certfile`` and ``keyfile``.
"""

import ssl

import pytest

from placement_runner import writes
from tests import helpers
from tests import identity_standin
from tests import tls_cloud

USER = 'tls-reporter'


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    with tls_cloud.tls_cloud(tmp_path_factory.mktemp('tls')) as found:
        found.add_user(USER, ('service',))
        found.add_user('tls-admin', ('admin',))
        yield found


def node_conf(tmp_path, placement_section, host='tls-node', custom=''):
    """A compute node's nova.conf (the fake driver, the reporter keeping
    the image types, ``custom`` traits of its own)."""
    path = tmp_path / 'nova.conf'
    path.write_text(
        '[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = %s\n'
        'state_path = %s\n[virt_capabilities]\nimage_type_traits_owner = '
        'reporter\ncustom_traits = %s\n%s'
        % (host, tmp_path, custom, placement_section))
    return str(path)


def run(module, *args, env=None):
    child = helpers.Child.module(module, *args, env=env)
    code = child.finish()
    return code, child.out.text(), [
        line for line in child.err.text().splitlines() if line.strip()]


def report(conf, *args):
    return run('virt_capabilities.cmd.main', 'report', '--config-file', conf,
               *args)


def status(conf):
    return run('image_type_filter.cmd.main', 'status', '--config-file', conf)


def one_error(lines, *wanted):
    assert len(lines) == 1, lines
    for text in wanted:
        assert text in lines[0], lines[0]
    for text in ('Traceback', 'urllib3', 'HTTPSConnectionPool',
                 'Max retries'):
        assert text not in lines[0], lines[0]
    return lines[0]


def test_with_cafile_the_reporter_and_status_work(cloud, tmp_path, unique):
    admin = cloud.client('tls-admin')
    uuid = writes.create_resource_provider(admin, 'tls-node-' + unique)['uuid']
    trait = 'CUSTOM_TLS_' + unique.upper()
    conf = node_conf(tmp_path, cloud.placement_section(USER),
                     host='tls-node-' + unique, custom=trait)
    code, _, lines = report(conf)
    assert code == 0, lines
    assert trait in admin.get_provider_traits(uuid)[0]
    code, out, lines = status(conf)
    assert 'Placement microversion' in out, lines
    assert not any(line.startswith('ERROR') for line in lines), lines


@pytest.mark.parametrize('command', [report, status])
def test_without_cafile_keystone_is_one_line_naming_tls_and_cafile(
        cloud, tmp_path, command):
    section = cloud.placement_section(USER, tls=False, extra=(
        'certfile = %s\nkeyfile = %s\n' % (cloud.ca.client_certfile,
                                           cloud.ca.client_keyfile)))
    code, _, lines = command(node_conf(tmp_path, section))
    assert code == 2, lines
    one_error(lines, 'cannot reach Keystone at %s' % cloud.identity.auth_url,
              'TLS', 'not trusted', 'set [placement] cafile')


@pytest.mark.parametrize('command', [report, status])
def test_without_cafile_placement_is_one_line_naming_tls_and_cafile(
        cloud, tmp_path, command):
    """Placement alone on TLS (no Keystone): its URL, TLS and the option."""
    section = ('[placement]\nauth_type = admin_token\nendpoint = %s\n'
               'token = t\ncertfile = %s\nkeyfile = %s\n'
               % (cloud.placement.endpoint, cloud.ca.client_certfile,
                  cloud.ca.client_keyfile))
    code, _, lines = command(node_conf(tmp_path, section))
    assert code == 2, lines
    one_error(lines, 'cannot reach Placement at %s'
              % cloud.placement.endpoint, 'TLS', 'set [placement] cafile')


def test_insecure_works_and_is_one_warning(cloud, tmp_path, unique):
    admin = cloud.client('tls-admin')
    uuid = writes.create_resource_provider(
        admin, 'tls-insecure-' + unique)['uuid']
    trait = 'CUSTOM_TLS_INSECURE_' + unique.upper()
    section = cloud.placement_section(USER, tls=False, extra=(
        'insecure = True\ncertfile = %s\nkeyfile = %s\n'
        % (cloud.ca.client_certfile, cloud.ca.client_keyfile)))
    conf = node_conf(tmp_path, section, host='tls-insecure-' + unique,
                     custom=trait)
    code, _, lines = report(conf)
    assert code == 0, lines
    assert trait in admin.get_provider_traits(uuid)[0]
    warnings = [line for line in lines if 'WARNING' in line
                or 'Warning' in line]
    assert len(warnings) == 1, lines
    assert '[placement] insecure' in warnings[0]
    assert 'not verified' in warnings[0]


def test_a_client_certificate_is_sent_and_its_absence_named(cloud,
                                                           tmp_path):
    """The server requires one: the right one passes (the test above),
    none or a stranger's is one line naming the options."""
    none = cloud.placement_section(USER, tls=False,
                                   extra='cafile = %s\n' % cloud.ca.cafile)
    code, _, lines = status(node_conf(tmp_path, none))
    assert code == 2, lines
    one_error(lines, 'cannot reach Placement at %s'
              % cloud.placement.endpoint, 'TLS',
              'set [placement] certfile and keyfile')
    stranger = cloud.placement_section(USER, tls=False, extra=(
        'cafile = %s\ncertfile = %s\nkeyfile = %s\n'
        % (cloud.ca.cafile, cloud.stranger.client_certfile,
           cloud.stranger.client_keyfile)))
    code, _, lines = status(node_conf(tmp_path, stranger))
    assert code == 2, lines
    one_error(lines, 'TLS', cloud.stranger.client_certfile,
              '[placement] certfile')
    code, out, lines = status(node_conf(
        tmp_path, cloud.placement_section(USER)))
    assert 'Placement microversion' in out, lines


@pytest.mark.parametrize('option,path,says', [
    ('cafile', '{missing}', 'no such file'),
    ('cafile', '{client_key}', 'holds no PEM certificate'),
    ('certfile', '{stranger_cert}', 'is not the one in [placement] keyfile'),
])
def test_unusable_tls_files_are_one_line_before_sending(cloud, tmp_path,
                                                        option, path, says):
    files = {'missing': str(tmp_path / 'missing.pem'),
             'client_key': cloud.ca.client_keyfile,
             'stranger_cert': cloud.stranger.client_certfile}
    section = cloud.placement_section(USER, extra='%s = %s\n' % (
        option, path.format(**files)))
    before = list(cloud.identity.requests)
    code, _, lines = report(node_conf(tmp_path, section))
    assert code == 2, lines
    one_error(lines, '[placement] %s' % option, says)
    assert cloud.identity.requests == before


def test_the_auth_url_probe_runs_over_tls(cloud, tmp_path):
    """An identity URL that answers 401 to version discovery, behind TLS:
    the probe must reach it through the CA bundle to say so (a probe
    that skipped it would leave keystoneauth1 to hang there)."""
    refusing = identity_standin.IdentityStandIn(
        cloud.ca.server_certfile, cloud.ca.server_keyfile,
        discovery_status=401)
    with refusing:
        section = cloud.placement_section(USER).replace(
            cloud.identity.auth_url, refusing.auth_url)
        code, _, lines = report(node_conf(tmp_path, section), '--wait',
                                '600')
        assert code == 2, lines
        one_error(lines, 'auth_url', 'answered 401 to version discovery')
        assert refusing.requests == ['GET /v3']


def test_the_discovery_diagnosis_trusts_the_cloud_cacert(cloud, tmp_path):
    """openstacksdk's failed version discovery is diagnosed with one GET
    of our own, through the same session: its CA bundle (OS_CACERT), so
    the answer is the server's, not a certificate error."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cloud.ca.server_certfile,
                            cloud.ca.server_keyfile)
    not_placement = helpers.RecordingServer(status=404, tls=context)
    try:
        code, _, lines = run(
            'image_type_filter.cmd.main', 'candidates', '--disk-format',
            'raw', env=helpers.clean_env(
                OS_AUTH_TYPE='admin_token', OS_ENDPOINT=not_placement.endpoint,
                OS_TOKEN='t', OS_CACERT=cloud.ca.cafile))
    finally:
        not_placement.stop()
    assert code == 1, lines
    one_error(lines, 'cannot reach Placement at %s' % not_placement.endpoint,
              'answered 404 without a version document')


def clouds_yaml(cloud, tmp_path, **tls):
    """A clouds.yaml with one cloud, ``tls``, for USER."""
    lines = ['clouds:', '  tls:', '    region_name: %s'
             % identity_standin.REGION, '    auth:',
             '      auth_url: %s' % cloud.identity.auth_url,
             '      username: %s' % USER, '      password: %s' % USER[::-1],
             '      project_name: %s' % tls_cloud.PROJECT,
             '      user_domain_name: Default',
             '      project_domain_name: Default']
    lines += ['    %s: %s' % item for item in tls.items()]
    path = tmp_path / 'clouds.yaml'
    path.write_text('\n'.join(lines) + '\n')
    return helpers.clean_env(OS_CLIENT_CONFIG_FILE=str(path))


def test_clouds_yaml_tls_settings_reach_every_request(cloud, tmp_path):
    both = clouds_yaml(cloud, tmp_path, cacert=cloud.ca.cafile,
                       cert=cloud.ca.client_certfile,
                       key=cloud.ca.client_keyfile)
    code, out, lines = run('image_type_filter.cmd.main', 'status',
                           '--os-cloud', 'tls', env=both)
    assert 'Placement microversion' in out, lines
    no_cert = clouds_yaml(cloud, tmp_path, cacert=cloud.ca.cafile)
    code, _, lines = run('image_type_filter.cmd.main', 'status',
                         '--os-cloud', 'tls', env=no_cert)
    assert code == 2, lines
    one_error(lines, 'cannot reach Placement at %s' % cloud.placement.endpoint,
              'TLS', 'set cert and key (clouds.yaml or OS_CERT and OS_KEY)')
    no_ca = clouds_yaml(cloud, tmp_path, cert=cloud.ca.client_certfile,
                        key=cloud.ca.client_keyfile)
    code, _, lines = run('image_type_filter.cmd.main', 'status',
                         '--os-cloud', 'tls', env=no_ca)
    assert code == 2, lines
    one_error(lines, 'cannot reach Keystone', 'TLS',
              'set cacert (clouds.yaml or OS_CACERT)')


def test_the_openstack_client_tls_options_reach_every_request(cloud):
    credentials = [
        '--os-auth-url', cloud.identity.auth_url, '--os-username', USER,
        '--os-password', USER[::-1], '--os-project-name', tls_cloud.PROJECT,
        '--os-user-domain-name', 'Default', '--os-project-domain-name',
        'Default', '--os-region-name', identity_standin.REGION]
    cert = ['--os-cert', cloud.ca.client_certfile,
            '--os-key', cloud.ca.client_keyfile]
    code, out, lines = run('openstackclient.shell', *credentials,
                           '--os-cacert', cloud.ca.cafile, *cert,
                           'image-type', 'status')
    assert 'Placement microversion' in out, lines
    code, _, lines = run('openstackclient.shell', *credentials, *cert,
                         'image-type', 'status')
    assert code == 2, lines
    one_error(lines, 'cannot reach Keystone', 'TLS', 'set --os-cacert')
    code, _, lines = run('openstackclient.shell', *credentials,
                         '--os-cacert', cloud.ca.cafile, 'image-type',
                         'status')
    assert code == 2, lines
    one_error(lines, 'cannot reach Placement', 'TLS',
              'set --os-cert and --os-key')
