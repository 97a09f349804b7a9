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

"""What the request filters do inside nova-scheduler, with only the
``service`` role, against a real Placement enforcing its own 2026 policy
defaults (noauth2 takes the roles from ``X-Roles``, as keystonemiddleware
would hand them over; ``test_least_privilege.py`` does the same for the
commands through a Keystone stand-in).

``service`` alone does everything the filters do: create the reserved
traits at start-up (``placement:traits:update``), read which traits exist
and which hosts carry them (``placement:traits:list``), a host's traits on
a rebuild (``placement:resource_providers:traits:list``), beside the query
Nova itself sends (``placement:allocation_candidates:list``). With
``reader`` the start-up write is refused with one WARNING naming the
trait, as doc/source/install/scheduler.rst says, and Nova's own query is
refused too: the write asks for nothing nova-scheduler does not already
need.
"""

import logging
import uuid

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint
import pytest

from image_type_common import exceptions
from image_type_common import placement_client
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import pipeline as filter_pipeline
from placement_runner import writes


def client_with_roles(placement, roles):
    auth = token_endpoint.Token(placement.endpoint, 'nova:service-project')
    return placement_client.PlacementClient(ks_adapter.Adapter(
        session.Session(auth=auth), service_type='placement',
        additional_headers={'X-Roles': roles}))


def filters(client, reserved):
    return filter_pipeline.RequestFilterPipeline.from_settings(
        settings.FilterSettings.defaults(
            image_type_enabled=True, isolation_enabled=True,
            isolation_rules=(reserved,)),
        placement=client)


def test_the_service_role_alone_does_all_the_filters_do(placement, unique,
                                                        caplog):
    reserved = 'CUSTOM_ROLE_%s' % unique.upper()
    host = str(uuid.uuid4())
    admin = placement.client()
    writes.create_resource_provider(admin, 'role-%s' % unique, host)
    admin.put_provider_traits(host, {'COMPUTE_IMAGE_TYPE_RAW'},
                              admin.get_provider_traits(host)[1])
    client = client_with_roles(placement, 'service')
    with caplog.at_level(logging.WARNING):
        pipeline = filters(client, reserved)  # PUT /traits/CUSTOM_...
    assert caplog.records == []
    assert reserved in admin.list_traits({reserved})
    spec = our_filters.RequestSpec.for_boot('raw')
    pipeline(None, spec)  # GET /traits?name=..., ?associated=true
    assert spec.root_forbidden == {reserved}
    assert pipeline.rebuild_refusal(spec, lambda: client.get_provider_traits(
        host)[0]) is None
    client.get_allocation_candidates('resources=VCPU:1')


def test_the_reader_role_cannot_create_the_reserved_traits(placement,
                                                           unique, caplog):
    reserved = 'CUSTOM_ROLE_%s' % unique.upper()
    client = client_with_roles(placement, 'reader')
    with caplog.at_level(logging.WARNING):
        filters(client, reserved)
    assert any('could not create reserved trait %s' % reserved
               in r.getMessage() and '403' in r.getMessage()
               for r in caplog.records)
    with pytest.raises(exceptions.Error):
        client.get_allocation_candidates('resources=VCPU:1')
