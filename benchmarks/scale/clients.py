"""A Placement client of its own, made inside a benchmark's worker process.

Spawned processes get the endpoint and token only, and build their clients
from them: each client is its own keystoneauth session, as each node's
reporter or each scheduler has.
"""

from keystoneauth1 import adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint

from image_type_common import placement_client
from image_type_common.conf import placement as placement_conf


def new_client(endpoint, token):
    """With the retries the reporter's ``[placement]`` section has by
    default (connection errors and 502/503/504)."""
    retries = placement_conf.DEFAULT_RETRIES
    return placement_client.PlacementClient(adapter.Adapter(
        session.Session(auth=token_endpoint.Token(endpoint, token)),
        service_type='placement', connect_retries=retries,
        status_code_retries=retries,
        retriable_status_codes=[502, 503, 504]))
