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

"""Output columns, lists and mappings that read right in every cliff
formatter: data in ``json`` and ``yaml``, text (never a Python repr) in
``value``, ``shell`` and ``csv``.
"""

from cliff import columns
import yaml


class TextList(list):
    """A list whose text is comma-separated."""

    def __str__(self):
        return ', '.join(str(v) for v in self)


class TextDict(dict):
    """A mapping that is one line of text where text is wanted (``key:
    value; ...``, or ``text`` when given) and an object in json or yaml."""

    def __init__(self, mapping=(), text=None):
        super().__init__(mapping)
        self._text = text

    def __str__(self):
        if self._text is not None:
            return self._text
        return '; '.join('%s: %s' % kv for kv in self.items())


def register_yaml():
    """Teach ``-f yaml`` TextList and TextDict (SafeDumper knows a type
    only by its exact class). Process-wide, so called where a command line
    starts, never on import; idempotent."""
    yaml.SafeDumper.add_representer(
        TextList, yaml.representer.SafeRepresenter.represent_list)
    yaml.SafeDumper.add_representer(
        TextDict, yaml.representer.SafeRepresenter.represent_dict)


class DataColumn(columns.FormattableColumn):
    """A TextDict or TextList: its text in a table ('-' when empty),
    value, shell or csv; the data itself in json or yaml."""

    def human_readable(self):
        return str(self._value) or '-'

    def machine_readable(self):
        return self._value


class ListColumn(DataColumn):
    """A list, as the DataColumn of its TextList."""

    def __init__(self, value):
        super().__init__(TextList(value))


class MissingColumn(columns.FormattableColumn):
    """No value: null in json and yaml; nothing in value, shell and csv,
    as an empty list prints there; '-' in a table, as an empty list.
    cliff's formatters give every column the same ``machine_readable``,
    so the column is told the format."""

    def __init__(self, formatter):
        super().__init__(None)
        self._as_data = formatter in ('json', 'yaml')

    def human_readable(self):
        return '-'

    def machine_readable(self):
        return None if self._as_data else ''
