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

"""Shared fixtures: a real embedded Placement and nova.conf writers, and
the guard that keeps the run on loopback (``tests/network_guard.py``)."""

import os
import pathlib
import tempfile
import textwrap
import uuid

import pytest

from placement_runner import embedded
from tests import helpers
from tests import network_guard

pytest_plugins = ['pytester']

_GUARD_SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           'network_guard_site')


def pytest_configure(config):
    """Install the network guard here and, through PYTHONPATH, in every
    Python child the tests start; every blocked attempt is written to a
    file of this process's own, read after each test."""
    fd, log = tempfile.mkstemp(prefix='network-guard-', suffix='.log')
    os.close(fd)
    config.network_guard_log = log
    os.environ[network_guard.LOG_ENV] = log
    path = os.environ.get('PYTHONPATH')
    os.environ['PYTHONPATH'] = _GUARD_SITE + (os.pathsep + path
                                              if path else '')
    network_guard.install()


#: Each worker starts its own Placements; past this many they only crowd
#: each other.
MAX_WORKERS = 4
#: Many tests wait more than they compute (a child process's start, a
#: Placement that must not answer, a service's next cycle): two workers a
#: core keep the cores busy. On 2 cores with a CPU hog beside: 309 s with 2
#: workers, 266 s with 4.
WORKERS_PER_CORE = 2


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: two workers per core, at most ``MAX_WORKERS``."""
    return max(1, min(WORKERS_PER_CORE * len(os.sched_getaffinity(0)),
                      MAX_WORKERS))


def pytest_unconfigure(config):
    log = getattr(config, 'network_guard_log', None)
    if log:
        os.unlink(log)


class BlockedConnections:
    """What the network guard blocked during one test."""

    def __init__(self, log):
        self._log = log
        self._seen = os.path.getsize(log)

    def take(self):
        """The lines blocked since the test began (or the last take); they
        no longer fail the test."""
        with open(self._log) as f:
            f.seek(self._seen)
            text = f.read()
        self._seen += len(text.encode())
        return text.splitlines()


@pytest.fixture(autouse=True)
def blocked_connections(request):
    """Fails the test if anything it ran, in this process or a Python
    child, reached past loopback (see tests/network_guard.py)."""
    blocked = BlockedConnections(request.config.network_guard_log)
    yield blocked
    lines = blocked.take()
    if lines:
        pytest.fail('the test reached past 127.0.0.1:\n' + '\n'.join(lines),
                    pytrace=False)


@pytest.fixture(scope='session')
def sqlite_placement():
    """One real Placement for the session, the embedded default: SQLite,
    one thread. Tests use fresh provider names."""
    with embedded.EmbeddedPlacement() as server:
        yield server


@pytest.fixture(scope='session')
def postgresql_placement():
    """Placement the production way, for the session: PostgreSQL and
    several gunicorn API workers, so concurrent writers really race."""
    server = embedded.EmbeddedPlacement(backend='postgresql',
                                        workers=helpers.POSTGRESQL_WORKERS)
    with server:
        yield server


@pytest.fixture
def placement(request):
    """The session's Placement on SQLite, or on the backend a test is
    parametrized with (``helpers.on_every_backend``)."""
    backend = getattr(request, 'param', 'sqlite')
    return request.getfixturevalue('%s_placement' % backend)


@pytest.fixture
def listener():
    """A loopback HTTP server of the test's own that records requests."""
    server = helpers.RecordingServer()
    yield server
    server.stop()


@pytest.fixture
def fresh_placement():
    """A Placement of the test's own, for tests that stop or count it."""
    with embedded.EmbeddedPlacement() as server:
        yield server


@pytest.fixture
def client(placement):
    return placement.client()


@pytest.fixture
def unique():
    """A short unique suffix so tests sharing one Placement never collide."""
    return uuid.uuid4().hex[:8]


@pytest.fixture
def write_conf(tmp_path):
    """Write a nova.conf fragment; returns its path. state_path is private.
    ``path``: rewrite that file (a node's nova.conf edited in place)."""
    counter = iter(range(1000))

    def write(text, placement=None, path=None):
        path = path or tmp_path / ('nova-%d.conf' % next(counter))
        body = textwrap.dedent(text)
        if '[DEFAULT]' not in body:
            body = '[DEFAULT]\n' + body
        body = body.replace('[DEFAULT]\n', '[DEFAULT]\nstate_path = %s\n'
                            % tmp_path, 1)
        if placement is not None:
            body += '\n' + placement.nova_conf_section()
        pathlib.Path(path).write_text(body)
        return str(path)
    return write


@pytest.fixture(scope='session')
def demo_fleet():
    """A Placement of its own with the demo's mixed fleet reported into it,
    for the session: tests only read it (any test that writes makes its
    own providers or its own Placement)."""
    from image_type_demo import fleet
    with embedded.EmbeddedPlacement() as server:
        hosts = fleet.build(server, fleet.demo_fleet())
        yield server, hosts
