"""Shared fixtures: a real embedded Placement and nova.conf writers."""

import textwrap
import uuid

import pytest

from placement_runner import embedded
from tests import helpers


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
    """Write a nova.conf fragment; returns its path. state_path is private."""
    counter = iter(range(1000))

    def write(text, placement=None):
        path = tmp_path / ('nova-%d.conf' % next(counter))
        body = textwrap.dedent(text)
        if '[DEFAULT]' not in body:
            body = '[DEFAULT]\n' + body
        body = body.replace('[DEFAULT]\n', '[DEFAULT]\nstate_path = %s\n'
                            % tmp_path, 1)
        if placement is not None:
            body += '\n' + placement.nova_conf_section()
        path.write_text(body)
        return str(path)
    return write


@pytest.fixture(scope='module')
def demo_fleet():
    """A Placement of its own with the demo's mixed fleet reported into it."""
    from image_type_demo import fleet
    with embedded.EmbeddedPlacement() as server:
        hosts = fleet.build(server, fleet.demo_fleet())
        yield server, hosts
