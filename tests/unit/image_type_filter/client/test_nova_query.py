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

"""nova_query's comparison of two queries, order and encoding aside."""

from image_type_filter.client import nova_query

SENT = ('GET /allocation_candidates?limit=1000&resources=DISK_GB%3A1%2C'
        'MEMORY_MB%3A128%2CVCPU%3A1&root_required=COMPUTE_IMAGE_TYPE_QCOW2'
        '%2COWNER_NOVA%2C%21COMPUTE_STATUS_DISABLED%2C%21CUSTOM_TROVE '
        'HTTP/1.1" 200')


def test_the_same_query_in_another_order_and_encoding_is_the_same():
    ours = ('/allocation_candidates?root_required=!CUSTOM_TROVE,OWNER_NOVA,'
            '!COMPUTE_STATUS_DISABLED,COMPUTE_IMAGE_TYPE_QCOW2&resources='
            'VCPU:1,DISK_GB:1,MEMORY_MB:128&limit=1000')
    assert nova_query.comparable(ours) == nova_query.comparable(SENT)


def test_a_missing_trait_or_aggregate_is_not_the_same():
    assert nova_query.comparable(SENT.replace('%2C%21CUSTOM_TROVE', '')) != \
        nova_query.comparable(SENT)
    one = '/allocation_candidates?member_of=in:a,b&member_of=!in:c'
    assert nova_query.comparable(one) == nova_query.comparable(
        '/allocation_candidates?member_of=!in:c&member_of=in:b,a')
    assert nova_query.comparable(one) != nova_query.comparable(
        '/allocation_candidates?member_of=in:a,b&member_of=in:c')
