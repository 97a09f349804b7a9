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

"""Output columns that read right in every cliff formatter."""

from cliff import columns

from image_type_common.cli import values


class ListColumn(columns.FormattableColumn):
    """A list: comma-separated text in a table, value, shell or csv; a list
    in json or yaml. Never a Python repr."""

    def human_readable(self):
        return ', '.join(str(v) for v in self._value) or '-'

    def machine_readable(self):
        return values.TextList(self._value)


class DataColumn(columns.FormattableColumn):
    """A TextDict, TextList or None: its text in a table, value, shell or
    csv ('-' for nothing); the data itself in json or yaml."""

    def human_readable(self):
        return '-' if self._value is None else str(self._value) or '-'

    def machine_readable(self):
        return self._value
