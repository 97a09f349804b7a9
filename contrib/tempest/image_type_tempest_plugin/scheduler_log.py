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

"""Reading nova-scheduler's log file from a known offset.

oslo.log's default line format puts the process id third
("2026-11-24 02:00:00.123 4242 DEBUG nova.scheduler...") and the request id
in brackets, so a boot's lines say which scheduler worker handled it.
devstack's format ends debug lines with "{{(pid=4242) ...}}" instead.
"""

import re

_PID = re.compile(r'^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? (\d+) ')
_DEVSTACK_PID = re.compile(r'\(pid=(\d+)\)')


class SchedulerLog:
    """Lines appended to the log after this object was made."""

    def __init__(self, path):
        self.path = path
        with open(path, 'rb') as f:
            self.offset = f.seek(0, 2)

    def new_lines(self):
        with open(self.path, 'rb') as f:
            f.seek(self.offset)
            return f.read().decode('utf-8', 'replace').splitlines()


def pid_of(line):
    """The process id of an oslo.log line, or None."""
    match = _PID.match(line) or _DEVSTACK_PID.search(line)
    return int(match.group(1)) if match else None


def lines_with(lines, *words):
    return [line for line in lines if all(w in line for w in words)]
