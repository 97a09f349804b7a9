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

"""Rendering messages and untrusted values for one-line errors and logs."""


def one_line(value):
    """``value`` as text on one line: whitespace runs folded to one space."""
    return ' '.join(str(value).split())


def safe_repr(value, limit=64):
    """A log-safe, bounded rendering of untrusted input (no newlines, NULs)."""
    rendered = repr(value)
    return rendered if len(rendered) <= limit else rendered[:limit] + '...'
