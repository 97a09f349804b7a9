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
