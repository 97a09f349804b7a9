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

"""The Placement writes that build a fleet: providers, inventories,
resource classes, allocations.

Only the demo, the benchmarks and the tests make them (the product writes
traits alone), so they live here rather than on the product's
``PlacementClient``; each goes through that client's ``request``, at its
negotiated microversion, with its errors.
"""

from image_type_common import placement_client


def create_resource_provider(client, name, uuid=None, parent=None):
    body = {'name': name}
    if uuid:
        body['uuid'] = uuid
    if parent:
        body['parent_provider_uuid'] = parent
    return client.request('POST', '/resource_providers', body,
                          ok=(200, 201)).json()


def put_inventories(client, uuid, generation, inventories):
    body = {'resource_provider_generation': generation,
            'inventories': inventories}
    return client.request('PUT', '/resource_providers/%s/inventories'
                          % placement_client.quote(uuid), body).json()


def create_resource_class(client, name):
    """PUT /resource_classes/{name}: a CUSTOM_ class, idempotent."""
    client.request('PUT', '/resource_classes/%s'
                   % placement_client.quote(name), ok=(201, 204))


def put_allocations(client, consumer_uuid, body):
    """Claim resources for a consumer (PUT /allocations/{uuid})."""
    client.request('PUT', '/allocations/%s'
                   % placement_client.quote(consumer_uuid), body, ok=(204,))
