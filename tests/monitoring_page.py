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

"""What doc/source/admin/monitoring.rst says, as tests read it: the rows of
its tables of log lines, its console command lines and its alerting
rules."""

import os
import re

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(REPO, 'doc', 'source', 'admin', 'monitoring.rst')
LEVELS = ('DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')


def text():
    with open(PAGE) as f:
        return f.read()


def rows():
    """(text, level or None, line number) of every row of the page's
    tables whose first column is "Text": the piece of a log line to grep
    for, and the level the page gives it (None in the table of what the
    error part of a line says)."""
    tables, row, in_table = [], None, False
    for number, line in enumerate(text().splitlines(), 1):
        if line.startswith('.. list-table::'):
            in_table, row = None, None
            continue
        cell = re.match(r'^   (\*| ) - (.*)$', line)
        if cell is None:
            continue
        if cell.group(1) == '*':
            row = [cell.group(2)]
            if in_table is None:
                in_table = row[0] == 'Text'
            elif in_table:
                tables.append((row, number))
        elif row is not None:
            row.append(cell.group(2))
    found = []
    for row, number in tables:
        literal = re.fullmatch(r'``(.+?)``', row[0])
        assert literal, 'monitoring.rst:%d: a Text cell is one ``literal``' \
            % number
        level = row[1] if len(row) > 1 and row[1] in LEVELS else None
        found.append((literal.group(1), level, number))
    return found


def _blocks(language):
    return re.findall(r'^\.\. code-block:: %s\n\n((?: +.*\n|\n)+)' % language,
                      text(), re.M)


def console_lines():
    """The ``$`` lines of the page's console blocks."""
    return [line.strip()[2:] for block in _blocks('console')
            for line in block.splitlines() if line.strip().startswith('$ ')]


def alerting_rules():
    """The rules of the page's Prometheus rule file."""
    [block] = _blocks('yaml')
    return [rule for group in yaml.safe_load(block)['groups']
            for rule in group['rules']]


def rows_saying(line, level):
    """The rows whose text ``line`` (a log line at ``level``) contains, of
    that level or of none."""
    return [row for row in rows()
            if row[0] in line and row[1] in (None, level)]


def check_lines(lines):
    """(the rows matched, the lines no row says) of (level, line) pairs."""
    matched, unlisted = set(), []
    for level, line in lines:
        found = rows_saying(line, level)
        matched.update(text for text, _, _ in found)
        if not found:
            unlisted.append('%s %s' % (level, line))
    return matched, unlisted
