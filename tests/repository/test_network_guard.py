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

"""The guard that keeps README's test command on 127.0.0.1 really guards:
a connection past loopback fails at once and fails the test, here and in
a Python child; loopback and Unix sockets still work."""

import socket
import subprocess
import sys

import pytest

from tests import helpers
from tests import network_guard

REPO = helpers.REPO
# Documentation addresses (RFC 5737, RFC 3849): nothing answers there, so
# even a broken guard sends nothing anywhere that matters.
OUTSIDE_V4 = ('192.0.2.1', 80)
OUTSIDE_V6 = ('2001:db8::1', 80, 0, 0)
#: A safety net should the guard be broken (a SYN sent into the void),
#: never what the test waits for: the guard refuses before connecting.
SAFETY = 5


@pytest.mark.parametrize('family,address', [
    (socket.AF_INET, OUTSIDE_V4),
    (socket.AF_INET6, OUTSIDE_V6),
])
@pytest.mark.parametrize('how', ['connect', 'connect_ex'])
def test_a_connection_past_loopback_is_refused_and_recorded(
        blocked_connections, family, address, how):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(SAFETY)
        with pytest.raises(network_guard.NetworkBlocked):
            getattr(s, how)(address)
    lines = blocked_connections.take()
    assert len(lines) == 1 and address[0] in lines[0]


def test_a_datagram_past_loopback_is_refused(blocked_connections):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        with pytest.raises(network_guard.NetworkBlocked):
            s.sendto(b'x', OUTSIDE_V4)
        with pytest.raises(network_guard.NetworkBlocked):
            s.sendmsg([b'x'], [], 0, OUTSIDE_V4)
    assert len(blocked_connections.take()) == 2


def test_connecting_a_datagram_socket_sends_nothing_sending_does(
        blocked_connections):
    """How oslo.utils finds "my IP" (Nova's [DEFAULT] my_ip default):
    connect a UDP socket outwards, read its own address, send nothing.
    That stays allowed; a send on such a socket does not."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(OUTSIDE_V4)
        except OSError:
            pytest.skip('no route at all on this machine')
        assert s.getsockname()[0]
        assert blocked_connections.take() == []
        for send in (lambda: s.send(b'x'), lambda: s.sendall(b'x'),
                     lambda: s.sendmsg([b'x'])):
            with pytest.raises(network_guard.NetworkBlocked):
                send()
    assert len(blocked_connections.take()) == 3


def test_the_guard_is_not_an_oserror():
    """Code under test that treats OSError as "server down" must not
    swallow it and carry on."""
    assert not issubclass(network_guard.NetworkBlocked, OSError)


@pytest.mark.parametrize('host', ['127.0.0.1', 'localhost'])
def test_loopback_still_connects(blocked_connections, host):
    with socket.create_server(('127.0.0.1', 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection((host, port), timeout=SAFETY):
            conn, _ = server.accept()
            conn.close()
    assert blocked_connections.take() == []


def test_loopback_datagrams_still_go(blocked_connections):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind(('127.0.0.1', 0))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            client.sendto(b'a', server.getsockname())
            client.connect(server.getsockname())
            client.send(b'b')
        assert [server.recv(1), server.recv(1)] == [b'a', b'b']
    assert blocked_connections.take() == []


def test_unix_sockets_are_not_network(blocked_connections, tmp_path):
    path = str(tmp_path / 'sock')
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen()
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
            client.sendall(b'x')
            conn, _ = server.accept()
            with conn:
                assert conn.recv(1) == b'x'
    assert blocked_connections.take() == []


@pytest.mark.parametrize('family,address,expected', [
    (socket.AF_INET, ('127.0.0.1', 1), True),
    (socket.AF_INET, ('127.1.2.3', 1), True),
    (socket.AF_INET, ('', 1), True),
    (socket.AF_INET, ('10.0.0.1', 1), False),
    (socket.AF_INET, ('128.0.0.1', 1), False),
    (socket.AF_INET6, ('::1', 1, 0, 0), True),
    (socket.AF_INET6, ('::ffff:127.0.0.1', 1, 0, 0), True),
    (socket.AF_INET6, ('::ffff:192.0.2.1', 1, 0, 0), False),
    (socket.AF_INET6, ('fe80::1%lo', 1, 0, 0), False),
    (socket.AF_INET, ('localhost', 1), True),
    (socket.AF_INET, ('name.invalid', 1), False),
    (socket.AF_UNIX, '/tmp/x', True),
])
def test_what_counts_as_loopback(family, address, expected):
    assert network_guard.is_loopback(family, address) is expected


def test_a_python_child_is_guarded_too(blocked_connections):
    """What tests start (the CLI, Placement, a benchmark) runs in a child:
    the guard reaches children through PYTHONPATH (sitecustomize)."""
    code = ('import socket; socket.create_connection(%r, timeout=%d)'
            % (OUTSIDE_V4, SAFETY))
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True,
                          text=True, timeout=helpers.SAFETY_TIMEOUT,
                          env=helpers.clean_env())
    assert proc.returncode != 0
    assert 'NetworkBlocked' in proc.stderr
    assert 'Error in sitecustomize' not in proc.stderr
    lines = blocked_connections.take()
    assert len(lines) == 1 and '192.0.2.1' in lines[0]


def test_a_child_reaching_out_fails_the_test_that_started_it(
        pytester, monkeypatch):
    """Without ``take()``, what a test's child blocked fails that test,
    even when the child hides the error and exits 0."""
    monkeypatch.setenv('PYTHONPATH', REPO)
    pytester.makeconftest("pytest_plugins = ['tests.conftest']\n")
    pytester.makepyfile(test_reaches_out='''
        import subprocess, sys
        CODE = """
        import socket
        try:
            socket.create_connection(('192.0.2.1', 80), timeout=5)
        except BaseException:
            pass
        """
        def test_hides_it():
            subprocess.run([sys.executable, '-c', CODE], check=True,
                           timeout=120)
        def test_stays_home():
            pass
    ''')
    result = pytester.runpytest_subprocess('-p', 'no:cacheprovider')
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(['*ERROR at teardown of test_hides_it*',
                                 'the test reached past 127.0.0.1:',
                                 '*blocked a connection to*192.0.2.1*'])
