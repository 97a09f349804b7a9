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

"""What the reporters' removal must leave: every provider as before, less
the traits each compute's config gave its reporter."""

import pytest

from gate_cloud import reporter_removal

BEFORE = {
    'vm': ['COMPUTE_IMAGE_TYPE_QCOW2', 'COMPUTE_NODE', 'OWNER_NOVA'],
    'fake-trove': ['COMPUTE_IMAGE_TYPE_RAW', 'COMPUTE_NODE', 'CUSTOM_TROVE'],
}
COMPUTES = [{'provider': 'vm', 'custom_traits': []},
            {'provider': 'fake-trove', 'custom_traits': ['CUSTOM_TROVE']}]


def test_after_the_removal_only_the_reporters_traits_are_gone():
    expected = reporter_removal.expected_after(BEFORE, COMPUTES)
    assert expected == {
        'vm': ['COMPUTE_IMAGE_TYPE_QCOW2', 'COMPUTE_NODE', 'OWNER_NOVA'],
        'fake-trove': ['COMPUTE_IMAGE_TYPE_RAW', 'COMPUTE_NODE']}
    assert reporter_removal.compare(expected, expected) == {}


@pytest.mark.parametrize('after,difference', [
    # The reporter's trait left behind.
    ({'vm': BEFORE['vm'], 'fake-trove': BEFORE['fake-trove']},
     {'fake-trove': {'left': ['CUSTOM_TROVE'], 'lost': []}}),
    # One of nova-compute's taken with it.
    ({'vm': BEFORE['vm'], 'fake-trove': ['COMPUTE_NODE']},
     {'fake-trove': {'left': [], 'lost': ['COMPUTE_IMAGE_TYPE_RAW']}}),
])
def test_a_trait_left_or_lost_is_named(after, difference):
    expected = reporter_removal.expected_after(BEFORE, COMPUTES)
    assert reporter_removal.compare(expected, after) == difference
