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

"""Where a provider's traits are read and written: Placement, today.

The reporter reads a provider's traits, works out the target with the owner
rule, and writes it back; it does so through a store, so that the traits of
a provider whose writer takes them from elsewhere (nova-compute's ironic
driver copies an Ironic node's own traits over its provider's on every
update: ``drivers.Driver.replaces_provider_traits``) can be written where
that writer reads them. A store has five calls and two attributes:

* ``read(uuid)``: (traits, generation), the generation being whatever
  ``write`` needs to refuse a concurrent change (None if nothing);
* ``write(uuid, traits, generation)``: make the provider carry exactly
  ``traits``; ``exceptions.ConcurrentUpdate`` if it changed since the read
  (the reporter reads again and retries), ``exceptions.UnknownTraits`` for
  traits the store does not know;
* ``create_trait(name)``: make a custom trait known;
* ``resolve_with_wait(refs, wait, sleep)``: (its uuids of ``refs`` in
  ref order, the refs not found), waited for as ``providers.wait_for``
  says;
* ``in_sync(tokens)``: the providers whose traits match Placement's
  ``required`` ``tokens`` (all desired, none of the ``!`` ones), or None
  when the store cannot ask that in one query;
* ``kind``: what its providers are, as a log line names one
  (``provider``, ``Ironic node``);
* ``outcome_unknown``: the errors of a ``write`` after which what it
  changed cannot be known (no answer): the reporter then keeps recorded
  every trait it was about to add. After any other error it reads the
  provider again and keeps recorded those it carries (why:
  doc/source/admin/trait-ownership.rst, "What the state may do").
"""

import time

from image_type_common import exceptions
from image_type_common import placement_client
from virt_capabilities import providers


class PlacementTraits:
    """A provider's traits in Placement: one GET to read, one PUT with the
    provider generation to write."""

    kind = 'provider'
    #: No answer after the configured retries: the PUT may have been
    #: applied.
    outcome_unknown = (exceptions.PlacementUnavailable,)

    def __init__(self, client):
        self.client = client

    def read(self, uuid):
        return self.client.get_provider_traits(uuid)

    def write(self, uuid, traits, generation):
        self.client.put_provider_traits(uuid, traits, generation)

    def create_trait(self, name):
        self.client.create_trait(name)

    def resolve_with_wait(self, refs, wait=0.0, sleep=time.sleep):
        return providers.resolve_with_wait(self.client, refs, wait, sleep)

    def in_sync(self, tokens):
        if not self.client.supports(placement_client.FORBIDDEN_TRAITS):
            return None
        return {rp['uuid'] for rp in self.client.list_resource_providers(
            required=','.join(tokens))}
