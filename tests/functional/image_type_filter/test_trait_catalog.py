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

"""The request filters against a real Placement that stops answering:
a failed read is remembered for the refresh interval, so an outage adds no
request per boot, and the allocation-candidate query decides meanwhile."""

from image_type_common import placement_client
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import pipeline as filter_pipeline


class CountingAdapter:
    """The test's own count of what reaches the wire."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.sent = 0

    def request(self, *args, **kwargs):
        self.sent += 1
        return self.adapter.request(*args, **kwargs)


def test_a_stopped_placement_costs_one_request_per_interval(
        fresh_placement):
    counting = CountingAdapter(fresh_placement.adapter())
    client = placement_client.PlacementClient(counting)
    client.negotiate()
    pipeline = filter_pipeline.RequestFilterPipeline.from_settings(
        settings.FilterSettings.defaults(
            image_type_enabled=True, isolation_enabled=True,
            isolation_rules=('CUSTOM_TROVE',),
            image_metadata_families=('architecture', 'storage_bus'),
            traits_refresh_interval=3600),
        placement=client)
    fresh_placement.stop()
    before = counting.sent
    for _ in range(20):
        spec = our_filters.RequestSpec.for_boot(
            'vmdk', properties={'hw_disk_bus': 'scsi'},
            extra_specs={'trait:CUSTOM_TROVE': 'required'})
        pipeline(None, spec)  # no refusal from an answer nobody gave
        assert 'COMPUTE_IMAGE_TYPE_VMDK' in spec.root_required
    assert counting.sent - before == 1
