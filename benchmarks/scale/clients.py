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

"""A Placement client of its own, made inside a benchmark's worker process.

Spawned processes get the endpoint and token only, and build their clients
from them: each client is its own keystoneauth session, as each node's
reporter or each scheduler has.
"""

from keystoneauth1 import adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint

from image_type_common import placement_client
from image_type_common.conf import keystoneauth


def new_client(endpoint, token):
    """With the retries the reporter's ``[placement]`` section has by
    default (connection errors and 502/503/504)."""
    retries = keystoneauth.DEFAULT_RETRIES
    return placement_client.PlacementClient(adapter.Adapter(
        session.Session(auth=token_endpoint.Token(endpoint, token)),
        service_type='placement', connect_retries=retries,
        status_code_retries=retries,
        retriable_status_codes=[502, 503, 504]))
