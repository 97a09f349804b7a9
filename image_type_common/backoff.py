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

"""The one back-off: exponential, capped, jittered.

Wherever this project waits to try again, so a fleet of nodes restarted
together never retries in step; each wait's values live with its
command's tunables (``virt_capabilities.conf.reporter``).
"""

import dataclasses
import random


@dataclasses.dataclass(frozen=True)
class Backoff:
    """How one kind of wait backs off: ``base`` seconds before the first
    retry, doubling up to ``cap``."""

    base: float
    cap: float

    def delay(self, attempt, cap=None):
        """Seconds before retry ``attempt`` (0 for the first), between half
        and all of its ceiling; ``cap`` lowers the ceiling for this wait."""
        cap = self.cap if cap is None else min(cap, self.cap)
        ceiling = min(cap, self.base * (2 ** min(attempt, 32)))
        return random.uniform(ceiling / 2, ceiling)
