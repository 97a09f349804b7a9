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

"""The fleet as Placement sees it: compute hosts and the formats they boot.

Compute nodes are the providers Nova marks with the ``COMPUTE_NODE`` trait
(every driver, ironic included, in every supported Nova). Costs a fixed
number of queries however large the fleet: one listing, one ``required=``
query per format and one for ``COMPUTE_NODE``.
"""

import dataclasses

import os_traits

from image_type_common import image_types
from image_type_common import placement_client as pc


@dataclasses.dataclass
class Host:
    uuid: str
    name: str
    formats: set = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class Survey:
    hosts: dict            # uuid -> Host, compute hosts only

    def hosts_per_format(self):
        return {fmt: sorted(h.name for h in self.hosts.values()
                            if fmt in h.formats)
                for fmt in image_types.FORMATS}


def holders(client, **filters):
    """The providers a filtered listing returns; none when Placement does
    not know a trait it names (nobody has it: Placement older than
    os-traits, or a trait nobody ever set)."""
    try:
        return client.list_resource_providers(**filters)
    except pc.exceptions.UnknownTraits:
        return []


def take(client):
    by_uuid = {rp['uuid']: rp for rp in client.list_resource_providers()}
    formats = {}
    for fmt in image_types.FORMATS:
        for rp in holders(client, required=image_types.TRAIT_BY_FORMAT[fmt]):
            formats.setdefault(rp['uuid'], set()).add(fmt)
    compute_nodes = {rp['uuid'] for rp in holders(
        client, required=os_traits.COMPUTE_NODE)}
    return Survey({uuid: Host(uuid, by_uuid[uuid]['name'],
                              formats.get(uuid, set()))
                   for uuid in compute_nodes if uuid in by_uuid})
