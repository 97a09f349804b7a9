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

"""One line naming the service that failed, from every command.

Real listeners on 127.0.0.1: a closed port, a port that accepts and never
answers, and a real Placement that was stopped; Keystone "down" is a
closed port where ``auth_url`` points. stderr is captured whole: the only
line in it must be our error, naming Keystone or Placement and its URL,
with no urllib3 internals and no keystoneauth retry chatter.
"""

import socket
import subprocess
import sys

import pytest

from placement_runner import embedded
from tests.helpers import clean_env

#: What must never reach an operator at the default log level.
CHATTER = ('urllib3', 'HTTPConnectionPool', 'Max retries', 'Retrying',
           'NewConnectionError', 'Traceback', 'Failed to discover')
#: Some retries, so retry chatter would show if it were printed.
RETRIES = 'connect_retries = 2\nconnect_retry_delay = 0.05\n'
COMPUTE = ('[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n'
           'host = node-1\n')


def run(module, *args, env=None):
    return subprocess.run([sys.executable, '-m', module, *args],
                          capture_output=True, text=True, timeout=120,
                          env=env or clean_env())


def itf(*args, env=None):
    return run('image_type_filter.cmd.main', *args, env=env)


def openstack(*args, env=None):
    return run('openstackclient.shell', *args, env=env)


def commands(conf):
    """(argv, expected exit code) of every Placement-talking command."""
    return [
        (['virt_capabilities.cmd.main', 'report', '--config-file', conf], 1),
        (['virt_capabilities.cmd.main', 'report', '--dry-run',
          '--config-file', conf], 1),
        (['image_type_filter.cmd.main', 'status', '--config-file', conf],
         255),
        (['image_type_filter.cmd.main', 'candidates', '--disk-format', 'raw',
          '--config-file', conf], 1),
        (['openstackclient.shell', 'image-type', 'candidates',
          '--disk-format', 'raw', '--config-file', conf], 1),
        (['openstackclient.shell', 'image-type', 'status',
          '--config-file', conf], 255),
    ]


def assert_one_line(proc, *wanted):
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for text in wanted:
        assert text in lines[0], lines[0]
    for text in CHATTER:
        assert text not in proc.stderr, proc.stderr
    return lines[0]


@pytest.fixture
def closed_port():
    """A loopback port nothing listens on (bound, then closed)."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture
def silent_port():
    """A loopback port that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    sock.listen(16)
    yield sock.getsockname()[1]
    sock.close()


def admin_token_conf(tmp_path, endpoint, extra=''):
    path = tmp_path / 'nova.conf'
    path.write_text(COMPUTE + '[placement]\nauth_type = admin_token\n'
                    'endpoint = %s\ntoken = admin\n%s' % (endpoint, extra)
                    + RETRIES)
    return str(path)


def password_conf(tmp_path, auth_url):
    path = tmp_path / 'nova.conf'
    path.write_text(COMPUTE + '[placement]\nauth_type = password\n'
                    'auth_url = %s\nusername = nova\npassword = s3cret\n'
                    'project_name = service\nuser_domain_name = Default\n'
                    'project_domain_name = Default\n' % auth_url + RETRIES)
    return str(path)


def test_placement_closed_port_is_one_line_naming_placement(tmp_path,
                                                            closed_port):
    endpoint = 'http://127.0.0.1:%d' % closed_port
    conf = admin_token_conf(tmp_path, endpoint)
    for argv, code in commands(conf):
        proc = run(*argv)
        assert proc.returncode == code, (argv, proc.stderr)
        line = assert_one_line(proc, 'Placement', endpoint,
                               'connection refused')
        assert 'Keystone' not in line


def test_keystone_down_is_one_line_naming_keystone(tmp_path, closed_port):
    auth_url = 'http://127.0.0.1:%d/v3' % closed_port
    conf = password_conf(tmp_path, auth_url)
    for argv, code in commands(conf):
        proc = run(*argv)
        assert proc.returncode == code, (argv, proc.stderr)
        line = assert_one_line(proc, 'cannot reach Keystone at %s'
                               % auth_url, 'connection refused')
        assert 'Placement' not in line.replace('could not check: ', '')
        assert 's3cret' not in proc.stderr


def test_placement_that_never_answers_is_one_line(tmp_path, silent_port):
    endpoint = 'http://127.0.0.1:%d' % silent_port
    conf = admin_token_conf(tmp_path, endpoint, 'timeout = 1\n')
    for argv, code in commands(conf)[2:4]:
        proc = run(*argv)
        assert proc.returncode == code, (argv, proc.stderr)
        assert_one_line(proc, 'cannot reach Placement at %s: timed out '
                        '(no answer within 1 s)' % endpoint)


def test_a_stopped_placement_is_one_line_naming_its_url(tmp_path):
    placement = embedded.EmbeddedPlacement()
    with placement:
        conf = admin_token_conf(tmp_path, placement.endpoint)
        proc = itf('status', '--config-file', conf)
        assert proc.returncode == 1, proc.stderr  # could check: no nodes
    proc = itf('candidates', '--disk-format', 'raw', '--config-file', conf)
    assert proc.returncode == 1
    assert_one_line(proc, 'cannot reach Placement at %s'
                    % placement.endpoint)


def test_openstack_options_failures_are_one_line(closed_port):
    url = 'http://127.0.0.1:%d' % closed_port
    proc = openstack('--os-auth-type', 'admin_token', '--os-endpoint', url,
                     '--os-token', 'admin', 'image-type', 'candidates',
                     '--disk-format', 'raw')
    assert proc.returncode == 1
    assert_one_line(proc, 'cannot reach Placement at %s' % url)
    proc = openstack('--os-auth-url', url + '/v3', '--os-username', 'u',
                     '--os-password', 'p', '--os-project-name', 'p',
                     '--os-user-domain-name', 'Default',
                     '--os-project-domain-name', 'Default',
                     'image-type', 'status')
    assert proc.returncode == 255
    assert_one_line(proc, 'cannot reach Keystone at %s/v3' % url)


def test_openstack_config_file_reads_its_placement_section(demo_fleet,
                                                           tmp_path):
    """The help says --config-file's [placement] is used: no --os-*
    option, no OS_* variable, and the hosts come back."""
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    proc = openstack('image-type', 'candidates', '--config-file', str(conf),
                     '--disk-format', 'vmdk', '-f', 'value', '-c', 'name')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ['vmware-1', 'vmware-2']


@pytest.mark.parametrize('command', [['image-type', 'candidates',
                                      '--disk-format', 'raw'],
                                     ['image-type', 'status']])
def test_openstack_credentials_problems_exit_2(demo_fleet, tmp_path,
                                               command):
    server, _ = demo_fleet
    # None at all: the openstack client's own check, made ours.
    proc = openstack(*command)
    assert proc.returncode == 2, \
        proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    # Refused by Placement's policy (noauth2 gives user "wrong" no role).
    proc = openstack('--os-auth-type', 'admin_token', '--os-endpoint',
                     server.endpoint, '--os-token', 'wrong', *command)
    assert proc.returncode == 2, \
        proc.stderr
    assert_one_line(proc, '(403', 'needs the service role')
    # An empty token in the config file's [placement].
    conf = tmp_path / 'nova.conf'
    conf.write_text('[placement]\nauth_type = admin_token\nendpoint = %s\n'
                    'token = \n' % server.endpoint)
    proc = openstack(*command, '--config-file', str(conf))
    assert proc.returncode == 2, \
        proc.stderr
    assert_one_line(proc, 'token is empty')


def test_openstacksdk_environment_failures_are_one_line(closed_port):
    url = 'http://127.0.0.1:%d' % closed_port
    proc = itf('candidates', '--disk-format', 'raw', env=clean_env(
        OS_AUTH_TYPE='admin_token', OS_ENDPOINT=url, OS_TOKEN='admin'))
    assert proc.returncode == 1
    assert_one_line(proc, 'cannot reach Placement at %s: connection '
                    'refused' % url)
    proc = itf('status', env=clean_env(
        OS_AUTH_URL=url + '/v3', OS_USERNAME='u', OS_PASSWORD='s3cret',
        OS_PROJECT_NAME='p', OS_USER_DOMAIN_NAME='Default',
        OS_PROJECT_DOMAIN_NAME='Default'))
    assert proc.returncode == 255
    assert_one_line(proc, 'cannot reach Keystone at %s/v3: connection '
                    'refused' % url)
    assert 's3cret' not in proc.stderr
