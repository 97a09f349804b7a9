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
