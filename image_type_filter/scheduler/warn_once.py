"""Log a warning once per distinct input, with a bound on what is kept.

The request filters warn about what a request carries (an unknown
``disk_format``, an image property with no trait); a request's values are
untrusted, so the set of those already warned about must not grow without
bound.
"""


class WarnOnce:
    """Remembers what it warned about, up to ``limit`` keys."""

    def __init__(self, limit=256):
        self.limit = limit
        self.seen = set()

    def first_time(self, key):
        if key in self.seen:
            return False
        if len(self.seen) < self.limit:
            self.seen.add(key)
        return True
