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

"""No network beyond loopback while the tests run.

README's test command must pass on a machine with no network at all, so a
test that reaches past 127.0.0.1 (a package index, a DNS name on the
internet, a real cloud) is a bug. This guard makes such a connection fail
at once, and loudly: it raises ``NetworkBlocked`` (not an ``OSError``, so
code under test cannot mistake it for a server that is down and carry on),
prints one line to stderr, and appends that line to the file named by
``$IMAGE_TYPE_FILTER_TEST_NETWORK_LOG``, which ``tests/conftest.py`` reads
after each test and fails the test that wrote to it.

``tests/conftest.py`` installs it in the pytest process and, through the
``sitecustomize`` in ``network_guard_site/`` put first on ``PYTHONPATH``,
in every Python child the tests start (the CLI, Placement, pip, ...).
What it cannot see: programs that are not Python (PostgreSQL, git, bash
itself) and name lookups (``getaddrinfo`` asks the resolver below Python).

It imports nothing beyond the standard library and nothing of the
project's: it runs at the start of every child.
"""

import os
import socket
import sys

LOG_ENV = 'IMAGE_TYPE_FILTER_TEST_NETWORK_LOG'
_INSTALLED = '_image_type_filter_network_guard'


class NetworkBlocked(RuntimeError):
    """A test reached for an address beyond loopback."""


def _numeric_is_loopback(family, host):
    try:
        packed = socket.inet_pton(family, host.split('%', 1)[0])
    except (OSError, ValueError):
        return None  # not a numeric address of that family
    if family == socket.AF_INET:
        return packed[0] == 127
    if packed == socket.inet_pton(socket.AF_INET6, '::1'):
        return True
    v4_mapped = bytes(10) + b'\xff\xff'
    return packed[:12] == v4_mapped and packed[12] == 127


def is_loopback(family, address):
    """Whether connecting ``family`` to ``address`` stays on this host."""
    if family not in (socket.AF_INET, socket.AF_INET6):
        return True  # AF_UNIX, netlink: never leave the machine
    if not isinstance(address, tuple) or not address:
        return False
    host = address[0]
    if isinstance(host, bytes):
        host = host.decode('ascii', 'replace')
    if not host:
        return True  # '' is INADDR_ANY: this host
    numeric = _numeric_is_loopback(family, host)
    if numeric is not None:
        return numeric
    try:  # a name: allowed only if every address it names is loopback
        found = socket.getaddrinfo(host, None, family)
    except OSError:
        return False
    return bool(found) and all(
        _numeric_is_loopback(info[0], info[4][0]) for info in found)


def _refuse(family, address):
    blocked = getattr(socket.socket, _INSTALLED, None) or NetworkBlocked
    line = 'network guard: blocked a connection to %r (pid %d, %s)' % (
        address, os.getpid(), ' '.join(sys.argv)[:200] or sys.executable)
    sys.stderr.write(line + '\n')
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, 'a') as f:
            f.write(line + '\n')
    raise blocked(line)


def _check_connect(sock, address):
    # Connecting a datagram socket sends nothing (the kernel only picks a
    # route: oslo.utils finds "my IP" that way); sending on it is checked.
    if sock.type != socket.SOCK_DGRAM and not is_loopback(sock.family,
                                                          address):
        _refuse(sock.family, address)


def _check_peer(sock):
    if sock.type == socket.SOCK_DGRAM:
        try:
            peer = sock.getpeername()
        except OSError:
            return  # not connected: the send fails on its own
        if not is_loopback(sock.family, peer):
            _refuse(sock.family, peer)


def install():
    """Wrap ``socket.socket``'s connect, connect_ex, send, sendall, sendto
    and sendmsg; idempotent."""
    global NetworkBlocked
    cls = socket.socket
    installed = getattr(cls, _INSTALLED, None)
    if installed is not None:
        # Already installed by sitecustomize (a worker or a child started
        # from the test run), from another copy of this module: raise and
        # catch one class.
        NetworkBlocked = installed
        return
    connect, connect_ex = cls.connect, cls.connect_ex
    send, sendall, sendto, sendmsg = (cls.send, cls.sendall, cls.sendto,
                                      cls.sendmsg)

    def guarded_connect(self, address):
        _check_connect(self, address)
        return connect(self, address)

    def guarded_connect_ex(self, address):
        _check_connect(self, address)
        return connect_ex(self, address)

    def guarded_send(self, *args):
        _check_peer(self)
        return send(self, *args)

    def guarded_sendall(self, *args):
        _check_peer(self)
        return sendall(self, *args)

    def guarded_sendto(self, data, *args):
        address = args[-1] if args else None
        if address is not None and not is_loopback(self.family, address):
            _refuse(self.family, address)
        return sendto(self, data, *args)

    def guarded_sendmsg(self, buffers, ancdata=(), flags=0, address=None):
        if address is None:
            _check_peer(self)
            return sendmsg(self, buffers, ancdata, flags)
        if not is_loopback(self.family, address):
            _refuse(self.family, address)
        return sendmsg(self, buffers, ancdata, flags, address)

    cls.connect = guarded_connect
    cls.connect_ex = guarded_connect_ex
    cls.send = guarded_send
    cls.sendall = guarded_sendall
    cls.sendto = guarded_sendto
    cls.sendmsg = guarded_sendmsg
    setattr(cls, _INSTALLED, NetworkBlocked)
