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

"""Every Placement request has a timeout: a Placement that accepts the
connection and never answers ends each command with one line."""

import os
import socket
import subprocess
import sys

import pytest

from image_type_common import connection
from image_type_common.conf import keystoneauth
from image_type_common.conf import loading
from tests.helpers import clean_env


def test_placement_requests_have_a_timeout_by_default(tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text('[placement]\nauth_type = admin_token\n')
    conf = loading.load([str(path)], keystoneauth.placement.register_opts)
    assert conf.placement.timeout == keystoneauth.DEFAULT_TIMEOUT


def test_openstacksdk_path_is_bounded_as_nova_conf_is(placement, tmp_path,
                                                      monkeypatch):
    """OS_* (openstacksdk's proxy) gets the timeout and retries nova.conf's
    [placement] defaults to; keystoneauth1's own defaults are none."""
    path = tmp_path / 'nova.conf'
    path.write_text(placement.nova_conf_section())
    conf = loading.load([str(path)], keystoneauth.placement.register_opts)
    by_conf = connection.adapter_from_conf(conf)
    for name in [n for n in os.environ if n.startswith('OS_')]:
        monkeypatch.delenv(name)
    monkeypatch.setenv('OS_AUTH_TYPE', 'admin_token')
    monkeypatch.setenv('OS_ENDPOINT', placement.endpoint)
    monkeypatch.setenv('OS_TOKEN', placement.token)
    by_sdk = connection.adapter_from_cloud()
    for name in ('connect_retries', 'status_code_retries'):
        assert getattr(by_sdk, name) == getattr(by_conf, name)
        assert getattr(by_conf, name) == getattr(conf.placement, name)
        assert getattr(by_sdk, name) is not None
    assert by_sdk.session.timeout == by_conf.session.timeout
    assert by_sdk.session.timeout == conf.placement.timeout is not None


@pytest.fixture
def silent_placement():
    """A loopback listener whose connections are accepted by the kernel
    (the backlog) and never answered."""
    listener = socket.create_server(('127.0.0.1', 0), backlog=16)
    yield 'http://127.0.0.1:%d' % listener.getsockname()[1]
    listener.close()


@pytest.mark.parametrize('command,code', [
    (['virt_capabilities.cmd.main', 'report', '--provider', 'node-1'], 1),
    (['image_type_filter.cmd.main', 'status'], 255),
    (['image_type_filter.cmd.main', 'candidates', '--disk-format', 'raw'],
     1),
])
def test_a_placement_that_never_answers_ends_with_one_line(
        tmp_path, silent_placement, command, code):
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\n'
                    '[placement]\nauth_type = admin_token\nendpoint = %s\n'
                    'token = admin\ntimeout = 1\nconnect_retries = 0\n'
                    % silent_placement)
    module, *args = command
    proc = subprocess.run(
        [sys.executable, '-m', module, *args, '--config-file', str(path)],
        capture_output=True, text=True, timeout=120, env=clean_env())
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert 'timed out' in lines[0].lower() or 'timeout' in lines[0].lower()
