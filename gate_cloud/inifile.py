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

"""Config files as dicts of sections, rendered to INI; private files.

A value that is a list is written as the same key repeated (oslo.config's
MultiStrOpt, e.g. ``available_filters``).
Each service's module builds its sections; the tests parse what they
render with oslo.config as the services do.
"""

import os
import pathlib


def render(sections):
    lines = []
    for section, options in sections.items():
        lines.append('[%s]' % section)
        for key, value in options.items():
            for one in value if isinstance(value, list) else [value]:
                lines.append('%s = %s' % (key, one))
        lines.append('')
    return '\n'.join(lines)


def merge(*parts):
    out = {}
    for part in parts:
        for section, options in part.items():
            out.setdefault(section, {}).update(options)
    return out


def write(path, text, mode=0o600):
    """Write ``text`` to ``path`` (its directory made), readable by its
    owner only unless ``mode`` says otherwise: the files hold passwords."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    return path


def write_conf(path, sections):
    return write(path, render(sections))
