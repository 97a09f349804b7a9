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

"""Read what a service logged after a mark: the size of its log file
before, the text after it.

Offsets are bytes, so the text is read in binary and decoded after the
seek (a text-mode seek to a byte count is not a position Python
promises); a log not written yet is empty.
"""


def size(path):
    """The log's size in bytes now: the mark to read from later."""
    try:
        with open(path, 'rb') as f:
            return f.seek(0, 2)
    except FileNotFoundError:
        return 0


def read_from(path, offset):
    """The text written to ``path`` after byte ``offset``."""
    try:
        with open(path, 'rb') as f:
            f.seek(offset)
            return f.read().decode('utf-8', 'replace')
    except FileNotFoundError:
        return ''
