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

"""Every Python file carries the licence header OpenStack files carry.

The header is LICENSE's Apache-2.0 one; ``tools/add_license_header.py``
adds it where it is missing. An empty file (an ``__init__.py`` with no code)
stays empty, as OpenStack's hacking check H104 wants.
"""

import os

from tests import helpers

REPO = helpers.REPO
HEADER_LINES = (
    '# Licensed under the Apache License, Version 2.0 (the "License"); you '
    'may',
    '#      http://www.apache.org/licenses/LICENSE-2.0',
    '# License for the specific language governing permissions and '
    'limitations',
)
SKIP_DIRS = {'build', 'dist', '__pycache__', 'node_modules'}


def python_files():
    for directory, subdirs, files in os.walk(REPO):
        subdirs[:] = [d for d in subdirs
                      if not d.startswith('.') and d not in SKIP_DIRS
                      and not d.endswith('.egg-info')]
        for name in files:
            if name.endswith('.py'):
                yield os.path.join(directory, name)


def lacks_header(text):
    head = text.split('\n\n', 2)
    first = '\n'.join(head[:2])  # the header, after a shebang line
    return bool(text.strip()) and not all(line in first
                                          for line in HEADER_LINES)


def test_the_licence_is_apache_2():
    with open(os.path.join(REPO, 'LICENSE')) as f:
        text = f.read()
    assert 'Apache License' in text and 'Version 2.0, January 2004' in text
    assert 'END OF TERMS AND CONDITIONS' in text


def test_every_python_file_carries_the_header():
    files = list(python_files())
    assert len(files) > 100  # the walk found the project
    missing = []
    for path in files:
        with open(path, encoding='utf-8') as f:
            if lacks_header(f.read()):
                missing.append(os.path.relpath(path, REPO))
    assert not missing, ('without the licence header (run '
                         'tools/add_license_header.py): %s' % missing)


def test_a_file_without_it_is_caught():
    assert lacks_header('"""A module."""\nimport os\n')
    assert lacks_header('"""Says Apache License somewhere."""\n')
    assert not lacks_header('')
