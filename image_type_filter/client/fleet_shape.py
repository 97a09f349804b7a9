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

"""Is the fleet flat? Then ``required`` selects what ``root_required`` does.

A fleet is flat when every provider tree is a single provider and nothing is
shared: the unsuffixed ``required`` then lands on the same root providers as
``root_required``, and Placement answers it faster.
"""

import os_traits

SHARING_TRAIT = os_traits.MISC_SHARES_VIA_AGGREGATE


def roots(providers):
    """uuid -> provider for the root providers among ``providers``."""
    return {rp['uuid']: rp for rp in providers
            if rp.get('root_provider_uuid', rp['uuid']) == rp['uuid']}


def sharing_names(client):
    """Names of the sharing providers, sorted."""
    return sorted(rp['name'] for rp in
                  client.list_resource_providers(required=SHARING_TRAIT))


def is_flat(client):
    """True when no provider has a parent and none is shared (2 requests)."""
    everyone = client.list_resource_providers()
    return len(roots(everyone)) == len(everyone) and not sharing_names(client)
