"""The one back-off: exponential, capped, jittered.

Used wherever this project waits to try again (a 409 generation conflict, a
provider nova-compute has not created yet), so a fleet of nodes restarted
together never retries in step.
"""

import random


def delay(attempt, base, cap):
    """Seconds to wait before retry ``attempt`` (0 for the first retry):
    uniform between half and all of ``min(cap, base * 2 ** attempt)``."""
    ceiling = min(cap, base * (2 ** min(attempt, 32)))
    return random.uniform(ceiling / 2, ceiling)
