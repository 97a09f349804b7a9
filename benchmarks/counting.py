"""Count the requests a Placement client sends, for the benchmarks' figures.

The production client counts nothing; a benchmark wraps the client's
keystoneauth Adapter (the one call PlacementClient makes) instead.
"""


class CountingAdapter:
    """A keystoneauth Adapter (or anything with its ``request``) that
    counts the requests sent through it."""

    def __init__(self, adapter):
        self._adapter = adapter
        self.count = 0

    def request(self, *args, **kwargs):
        self.count += 1
        return self._adapter.request(*args, **kwargs)


def counted(client):
    """Wrap ``client``'s adapter in place; return the counter."""
    counter = CountingAdapter(client._adapter)
    client._adapter = counter
    return counter
