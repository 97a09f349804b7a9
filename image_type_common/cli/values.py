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

"""Lists and mappings that are text where text is wanted.

A command's data goes to every cliff formatter: ``json`` and ``yaml`` want
the list or mapping itself, ``value``, ``shell`` and ``csv`` print ``str()``
of it, which must never be a Python repr. Standard library only; cliff's
yaml output learns them in ``yaml_types``.
"""


class TextList(list):
    """A list that is text where text is wanted (``-f value``, ``shell``,
    ``csv``: comma-separated) and a list where a list is (``json``,
    ``yaml``)."""

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
