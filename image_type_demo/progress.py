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

"""The demo's progress while it builds its fleet: a bar on a terminal,
else a log line per 10%."""

import logging
import sys

LOG = logging.getLogger(__name__)

#: Fewer items than this get no progress output at all.
MIN_ITEMS = 50


class Progress:
    def __init__(self, total, what, stream=None, min_items=MIN_ITEMS):
        self.total = total
        self.what = what
        self.count = 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._next_log = total / 10
        self.enabled = total >= min_items

    def advance(self, step=1):
        self.count += step
        if not self.enabled:
            return
        if self.tty:
            self.stream.write('\r%s: %d/%d' % (self.what, self.count,
                                               self.total))
            self.stream.flush()
        elif self.count >= self._next_log:
            LOG.info('%s: %d/%d', self.what, self.count, self.total)
            self._next_log += self.total / 10

    def done(self):
        if self.enabled and self.tty:
            self.stream.write('\n')
            self.stream.flush()
