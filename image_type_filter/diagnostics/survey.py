"""The fleet as Placement sees it: compute hosts and the formats they boot.

Costs a fixed number of queries however large the fleet: one listing, one
``required=`` query per format, one for sharing providers, and an inventory
read only for root providers that report no image type at all (to tell a
compute node that has not reported yet from some other root provider).
"""

import dataclasses

from image_type_common import image_types
from image_type_common import placement_client as pc
from image_type_filter.scheduler import fleet_shape

COMPUTE_RESOURCE = 'VCPU'


@dataclasses.dataclass
class Host:
    uuid: str
    name: str
    formats: set = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class Survey:
    hosts: dict            # uuid -> Host, compute hosts only (roots)
    nested: bool           # some provider has a parent
    sharing: list          # names of sharing providers

    @property
    def reporting(self):
        return sorted(h.name for h in self.hosts.values() if h.formats)

    @property
    def not_reporting(self):
        return sorted(h.name for h in self.hosts.values() if not h.formats)

    @property
    def flat(self):
        """Every tree is one provider and nothing is shared: ``required``
        then selects the same hosts as ``root_required``."""
        return not self.nested and not self.sharing

    def hosts_per_format(self):
        return {fmt: sorted(h.name for h in self.hosts.values()
                            if fmt in h.formats)
                for fmt in image_types.FORMATS}


def take(client):
    client.require(pc.PROVIDERS_REQUIRED, 'list providers by trait')
    everyone = client.list_resource_providers()
    roots = fleet_shape.roots(everyone)
    nested = len(roots) != len(everyone)
    formats = {}
    for fmt in image_types.FORMATS:
        trait = image_types.TRAIT_BY_FORMAT[fmt]
        try:
            found = client.list_resource_providers(required=trait)
        except pc.exceptions.UnknownTraits:
            continue  # Placement older than os-traits: nobody has it
        for rp in found:
            formats.setdefault(rp['uuid'], set()).add(fmt)
    sharing = fleet_shape.sharing_names(client)
    hosts = {}
    for uuid, rp in roots.items():
        if uuid in formats or COMPUTE_RESOURCE in client.get_inventories(uuid):
            hosts[uuid] = Host(uuid, rp['name'], formats.get(uuid, set()))
    return Survey(hosts, nested, sharing)
