#!/usr/bin/env python3
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

"""Give every ``.py`` file of the repository the licence header.

The header is the one OpenStack files carry. It goes first in the file,
after a shebang line if there is one. A file that already has it, and an
empty file (an ``__init__.py`` with no code: OpenStack's hacking check H104
wants those without comments), are left exactly as they are.

``--check`` changes nothing: it lists the files that lack the header and
exits 1 if there are any. ``tests/repository/test_license_headers.py``
makes the same check in the test suite.
"""

import argparse
import os
import sys

HEADER = """\
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
"""

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Directories that are not the project's source: virtualenvs, builds,
#: caches, and anything hidden (.git, .tox, .venv-nova-*).
SKIP_DIRS = {'build', 'dist', '__pycache__', 'node_modules'}


def python_files(root=REPO):
    """Every ``.py`` file under ``root`` that belongs to the project."""
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(
            d for d in subdirs
            if not d.startswith('.') and d not in SKIP_DIRS
            and not d.endswith('.egg-info'))
        for name in sorted(files):
            if name.endswith('.py'):
                yield os.path.join(directory, name)


def needs_header(text):
    """True for a file with code and no header."""
    return bool(text.strip()) and HEADER not in text


def with_header(text):
    """``text`` with the header first (after a shebang), then one blank
    line before whatever came next."""
    shebang = ''
    if text.startswith('#!'):
        shebang, _, text = text.partition('\n')
        shebang += '\n'
    return shebang + HEADER + '\n' + text.lstrip('\n')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--check', action='store_true',
                        help='only list the files without the header')
    parser.add_argument('--root', default=REPO,
                        help='the repository (default: %(default)s)')
    args = parser.parse_args(argv)
    missing = []
    for path in python_files(args.root):
        with open(path, encoding='utf-8') as f:
            text = f.read()
        if not needs_header(text):
            continue
        missing.append(os.path.relpath(path, args.root))
        if not args.check:
            mode = os.stat(path).st_mode
            with open(path, 'w', encoding='utf-8') as f:
                f.write(with_header(text))
            os.chmod(path, mode)
    for path in missing:
        print(path)
    if args.check and missing:
        print('%d file(s) without the licence header; run %s'
              % (len(missing), os.path.relpath(__file__, args.root)),
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
