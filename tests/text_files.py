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

"""The repository's own text files, for the checks that read them all.

Every file a clone holds that is UTF-8 text: code, documentation, release
notes, configuration, scripts (``.ci/run``, ``devstack/``), but nothing a
build, a test run, CI or a virtualenv leaves behind (``.venv*``, ``.tox``,
``build``, ``dist``, ``benchmarks/results``, logs, generated sample
files).
"""

import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Dot directories and files that are the project's own.
DOT_DIRS = {'.ci'}
DOT_FILES = {'.zuul.yaml', '.gitignore'}
#: Directories of generated files, wherever they are.
SKIP_DIRS = {'build', 'dist', '__pycache__', 'results', 'node_modules'}
#: Generated files (oslo-config-generator's samples, CI's logs).
SKIP_SUFFIXES = ('.conf.sample', '.pyc', '.log')


def text_files():
    """(path relative to the repository, text) of each file, sorted."""
    found = []
    for directory, subdirs, files in os.walk(REPO):
        subdirs[:] = sorted(
            d for d in subdirs
            if (not d.startswith('.') or d in DOT_DIRS)
            and d not in SKIP_DIRS and not d.endswith('.egg-info'))
        for name in sorted(files):
            if name.endswith(SKIP_SUFFIXES) or (
                    name.startswith('.') and name not in DOT_FILES):
                continue
            path = os.path.join(directory, name)
            try:
                with open(path, encoding='utf-8') as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue  # an image, or a dangling link
            found.append((os.path.relpath(path, REPO), text))
    return found
