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

"""The filter end to end: filter, query, real Placement, mixed fleet."""


import pytest

from image_type_common import exceptions as common_exceptions
from image_type_common import image_types
from image_type_common import placement_client
from image_type_demo import fleet
from image_type_filter import exceptions as filter_exceptions
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import pipeline

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 5}

LIBVIRT = {'aki', 'ami', 'ari', 'iso', 'raw'}
#: What each demo host boots, from Nova 34's own tables (the drivers'
#: ``supports_image_type_*`` capabilities and libvirt's rules), written out
#: by hand: never from the reporter under test.
EXPECTED_FORMATS = {
    'libvirt-qcow2-1': LIBVIRT | {'qcow2'},
    'libvirt-qcow2-2': LIBVIRT | {'qcow2'},
    'libvirt-ceph-1': LIBVIRT,      # qcow2 in image_type_exclude_list
    'libvirt-ceph-2': LIBVIRT,
    'libvirt-lvm-1': LIBVIRT,       # lvm without force_raw_images
    'parallels-1': LIBVIRT | {'qcow2', 'ploop'},
    'libvirt-arm-1': LIBVIRT | {'qcow2'},
    'vmware-1': {'iso', 'vmdk'},
    'vmware-2': {'iso', 'vmdk'},
    'ironic-1': {'ami', 'qcow2', 'raw'},
    'zvm-1': {'raw'},
    'trove-1': LIBVIRT | {'qcow2'},
}


def filters(client, enabled=True):
    return pipeline.RequestFilterPipeline.from_settings(
        settings.FilterSettings.defaults(image_type_enabled=enabled),
        placement=client)


def candidates(server, disk_format, enabled=True, **kwargs):
    client = placement_client.PlacementClient(server.adapter())
    spec = our_filters.RequestSpec.for_boot(disk_format, RESOURCES, **kwargs)
    return our_filters.get_candidates(client, filters(client, enabled), spec)


def names(hosts, uuids):
    by_uuid = {h.uuid: h.name for h in hosts}
    return sorted(by_uuid[u] for u in uuids)


def supporting(hosts, disk_format):
    return sorted(h.name for h in hosts
                  if disk_format in EXPECTED_FORMATS[h.name])


def test_the_fleet_is_the_one_the_table_describes(demo_fleet):
    _, hosts = demo_fleet
    assert sorted(h.name for h in hosts) == sorted(EXPECTED_FORMATS)


@pytest.mark.parametrize('disk_format', image_types.FORMATS)
def test_every_format_returns_exactly_the_supporting_hosts(demo_fleet,
                                                           disk_format):
    server, hosts = demo_fleet
    if not supporting(hosts, disk_format):
        # No host boots it: the filter says so before asking for hosts.
        with pytest.raises(filter_exceptions.NoValidHost) as err:
            candidates(server, disk_format)
        assert str(err.value).startswith('No compute host boots %s images'
                                         % disk_format)
        return
    found = candidates(server, disk_format)
    assert names(hosts, found.provider_uuids) == supporting(hosts,
                                                            disk_format)
    assert 'root_required=' + image_types.TRAIT_BY_FORMAT[disk_format] in \
        found.query






def test_unsuffixed_required_selects_the_same_hosts(demo_fleet):
    """The form the benchmarks compare with (nova-scheduler never sends
    it): on this flat fleet the trait in the unsuffixed ``required``
    offers the hosts ``root_required`` does."""
    server, hosts = demo_fleet
    for disk_format in image_types.FORMATS:
        if not supporting(hosts, disk_format):
            continue  # refused before any query: the test above
        trait = image_types.TRAIT_BY_FORMAT[disk_format]
        found = candidates(server, disk_format, enabled=False,
                           required={trait})
        assert 'root_required' not in found.query
        assert 'required=' + trait in found.query
        assert names(hosts, found.provider_uuids) == supporting(
            hosts, disk_format)


def test_option_off_returns_every_host(demo_fleet):
    server, hosts = demo_fleet
    found = candidates(server, 'vmdk', enabled=False)
    assert names(hosts, found.provider_uuids) == sorted(h.name for h in hosts)
    assert found.filters_applied == []


def test_volume_backed_returns_every_host(demo_fleet):
    server, hosts = demo_fleet
    found = candidates(server, 'vmdk', is_bfv=True)
    assert names(hosts, found.provider_uuids) == sorted(h.name for h in hosts)


def own_hosts(placement, unique, *names):
    """Demo hosts of the test's own (suffixed names) on ``placement``."""
    return fleet.build(placement, [h for h in fleet.demo_fleet('-' + unique)
                                   if h.name.rsplit('-', 1)[0] in names])


def test_forbidden_traits_combine(placement, unique):
    hosts = own_hosts(placement, unique, 'vmware-1', 'vmware-2')
    client = placement.client()
    traits, generation = client.get_provider_traits(hosts[0].uuid)
    client.put_provider_traits(
        hosts[0].uuid, traits | {'COMPUTE_STATUS_DISABLED'}, generation)
    found = candidates(placement, 'vmdk',
                       root_forbidden={'COMPUTE_STATUS_DISABLED'})
    mine = [u for u in found.provider_uuids if u in {h.uuid for h in hosts}]
    assert names(hosts, mine) == [hosts[1].name]


def test_trait_placement_lacks_is_a_clear_error(demo_fleet):
    server, _ = demo_fleet
    client = server.client()
    spec = our_filters.RequestSpec.for_boot(
        'raw', RESOURCES, root_required={'COMPUTE_IMAGE_TYPE_NEWER_THAN_YOU'})
    with pytest.raises(common_exceptions.UnknownTraits) as err:
        our_filters.get_candidates(client, filters(client), spec)
    assert 'older than the installed os-traits' in str(err.value)
    assert 'COMPUTE_IMAGE_TYPE_NEWER_THAN_YOU' in str(err.value)


def test_custom_trait_placement_lacks_is_no_valid_host(demo_fleet, unique):
    """An image's trait:CUSTOM_X=required that no host was ever given:
    Placement answers 400 "No such trait", which is no valid host."""
    server, _ = demo_fleet
    client = server.client()
    trait = 'CUSTOM_NOBODY_' + unique.upper()
    spec = our_filters.RequestSpec.for_boot(
        'raw', RESOURCES, properties={'trait:' + trait: 'required'})
    with pytest.raises(filter_exceptions.NoValidHost) as err:
        our_filters.get_candidates(client, filters(client), spec)
    assert str(err.value) == ('No compute host carries %s: Placement does '
                              'not know the trait' % trait)
