"""``[virt_capabilities] host_architecture`` is read as Nova's Architecture
field reads a value: compared with Nova's own canonicalize."""

import pytest

pytest.importorskip('nova')

from nova import exception  # noqa: E402
from nova.objects import fields  # noqa: E402

from virt_capabilities import settings  # noqa: E402

CANDIDATES = tuple(fields.Architecture.ALL) + tuple(
    name.upper() for name in fields.Architecture.ALL) + (
    'i386', 'I486', 'i586', 'x86_32', 'x86_32p', 'amd64', 'AMD64',
    'armv7', 'arm64', 'x86-64', 'banana', 'i86pc', 'armv8', ' x86_64 ')


@pytest.mark.parametrize('name', CANDIDATES)
def test_what_nova_accepts_and_how_it_stores_it(name):
    try:
        nova = fields.Architecture.canonicalize(name.strip())
    except exception.InvalidArchitectureName:
        nova = None
    assert settings.canonical_architecture(name) == nova
