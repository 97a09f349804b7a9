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

"""Log a warning once per distinct input, with a bound on what is kept.

A request's values are untrusted, so what was warned about is bounded;
the check and the record are one step under a lock (requests run at once
on native threads since Nova 33), so one new value warns once.
"""

import threading


class WarnOnce:
    """Remembers what it warned about, up to ``limit`` keys."""

    def __init__(self, limit=256):
        self.limit = limit
        self.seen = set()
        self._lock = threading.Lock()

    def first_time(self, key):
        with self._lock:
            if key in self.seen:
                return False
            if len(self.seen) < self.limit:
                self.seen.add(key)
            return True
