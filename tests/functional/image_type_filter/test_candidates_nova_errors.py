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

"""candidates --server/--image/--flavor: what fails is one line.

Real listeners on 127.0.0.1, as
tests/functional/image_type_common/test_error_lines.py: a Keystone that is
not there, and an endpoint that is not Nova's (the admin token plugin sends
every service to one URL, here a real Placement). The answers of a real
Nova are in tests/nova.
"""

import socket

import pytest

from tests.functional.image_type_common import test_error_lines as error_lines
from tests.helpers import clean_env


@pytest.fixture
def closed_port():
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_keystone_down_is_one_line_naming_keystone(sqlite_placement,
                                                   tmp_path, closed_port):
    """Placement through nova.conf's [placement]; Nova and Glance through
    OS_*, whose Keystone is not there."""
    conf = tmp_path / 'nova.conf'
    conf.write_text(sqlite_placement.nova_conf_section())
    auth_url = 'http://127.0.0.1:%d/v3' % closed_port
    env = clean_env(OS_AUTH_URL=auth_url, OS_USERNAME='admin',
                    OS_PASSWORD='s3cret', OS_PROJECT_NAME='admin',
                    OS_USER_DOMAIN_NAME='Default',
                    OS_PROJECT_DOMAIN_NAME='Default')
    proc = error_lines.itf('candidates', '--config-file', str(conf),
                           '--server', 'vm-1', env=env)
    assert proc.returncode == 1, proc.stderr
    error_lines.assert_one_line(proc, 'cannot reach Keystone at %s'
                                % auth_url)
    assert 's3cret' not in proc.stderr


def test_an_endpoint_that_is_not_novas_is_one_line(sqlite_placement):
    server = sqlite_placement
    env = clean_env(OS_AUTH_TYPE='admin_token', OS_ENDPOINT=server.endpoint,
                    OS_TOKEN=server.token)
    proc = error_lines.itf('candidates', '--server', 'vm-1', env=env)
    assert proc.returncode == 1, proc.stderr
    error_lines.assert_one_line(proc, 'does not answer as Nova',
                                server.endpoint)


@pytest.mark.parametrize('args,text', [
    ([], 'give --server, --image, --flavor or --disk-format'),
    (['--server', 'vm-1', '--image', 'cirros'], 'not with --image'),
    (['--image', 'cirros', '--disk-format', 'raw'], 'not with --image'),
    (['--server', 'vm-1', '--image-property', 'a=b', '--strict'],
     '--image-property, --strict: only with --disk-format'),
    (['--disk-format', 'raw', '--nova-release', '31'],
     '--nova-release: only with --server, --image or --flavor'),
])
def test_usage_errors_exit_2_before_anything_is_asked(args, text):
    proc = error_lines.itf('candidates', *args)
    assert proc.returncode == 2, proc.stderr
    error_lines.assert_one_line(proc, text)
