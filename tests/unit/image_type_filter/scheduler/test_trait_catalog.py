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

"""The trait catalogue's rules (``trait_catalog.RULES``), each held by a
test named ``test_rule_<name>``: a refusal is decided on a fresh answer,
the common path asks nothing, and a failed read is remembered for the
interval.

The clock never moves unless a test moves it, and the interval is an hour:
whatever a test sees in between comes from the catalogue's rule, not from
timing.
"""

import logging

import pytest

from image_type_common import exceptions
from image_type_filter import exceptions as filter_exceptions
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import image_metadata_prefilter
from image_type_filter.scheduler import image_type_support
from image_type_filter.scheduler import isolation
from image_type_filter.scheduler import trait_catalog

HOUR = 3600.0


class Placement:
    """Answers as Placement would from the sets it is given, counting every
    request; ``down`` makes each one fail as an unreachable Placement."""

    def __init__(self, known=(), carried=(), creatable=True):
        self.known = set(known)
        self.carried = set(carried)
        self.creatable = creatable
        self.down = False
        self.requests = 0

    def _request(self):
        self.requests += 1
        if self.down:
            raise exceptions.PlacementUnavailable('cannot reach Placement')

    def list_traits(self, names):
        self._request()
        return set(names) & self.known

    def list_associated_traits(self):
        self._request()
        return set(self.carried)

    def create_trait(self, name):
        self._request()
        if not self.creatable:
            raise exceptions.PlacementUnavailable('cannot reach Placement')
        self.known.add(name)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def catalog_over(placement, clock=None):
    return trait_catalog.TraitCatalog(placement, interval=HOUR,
                                      clock=clock or Clock())


VMDK, RAW = 'COMPUTE_IMAGE_TYPE_VMDK', 'COMPUTE_IMAGE_TYPE_RAW'


def test_rule_carried_stays_carried():
    placement = Placement(carried={RAW})
    catalog = catalog_over(placement)
    assert catalog.carried(RAW) is True
    for _ in range(20):
        assert catalog.carried(RAW) is True
    assert placement.requests == 1


def test_rule_nobody_from_a_fresh_read():
    placement = Placement(carried={RAW})
    catalog = catalog_over(placement)
    assert catalog.carried(VMDK) is False
    placement.carried.add(VMDK)  # a host starts booting vmdk
    assert catalog.carried(VMDK) is True  # the clock has not moved
    assert placement.requests == 2


def test_rule_reserved_created_at_start():
    placement = Placement()
    catalog = catalog_over(placement)
    assert catalog.ensure({'CUSTOM_TROVE'}) == {'CUSTOM_TROVE'}
    assert catalog.known({'CUSTOM_TROVE'}) == {'CUSTOM_TROVE'}
    assert placement.requests == 1  # the PUT; no read after it
    placement = Placement(creatable=False)
    catalog = catalog_over(placement)
    assert catalog.ensure({'CUSTOM_TROVE'}) == set()
    assert catalog.known({'CUSTOM_TROVE'}) == set()
    assert placement.requests == 2  # left to unknown-asked-again


def test_rule_unknown_asked_again():
    clock = Clock()
    placement = Placement()
    catalog = catalog_over(placement, clock)
    assert catalog.known({'CUSTOM_TROVE'}) == set()
    placement.known.add('CUSTOM_TROVE')
    assert catalog.known({'CUSTOM_TROVE'}) == set()  # answered an instant ago
    assert placement.requests == 1
    assert catalog.known({'CUSTOM_TROVE'}, fresh=True) == {'CUSTOM_TROVE'}
    assert placement.requests == 2
    placement = Placement()
    catalog = catalog_over(placement, clock)
    assert catalog.known({'CUSTOM_TROVE'}) == set()
    placement.known.add('CUSTOM_TROVE')
    clock.now += HOUR
    assert catalog.known({'CUSTOM_TROVE'}) == {'CUSTOM_TROVE'}
    assert placement.requests == 2


def test_rule_newest_read_wins():
    """A slow read that started before a host began carrying VMDK answers
    after a later read that saw it: the later answer stays."""
    placement = Placement(carried={RAW})
    catalog = catalog_over(placement)
    slow = placement.list_associated_traits

    def read_overtaken():
        old = slow()  # what Placement said when this read started
        placement.carried.add(VMDK)
        placement.list_associated_traits = slow
        assert catalog.uncarried({VMDK}) == set()  # the later read
        return old

    placement.list_associated_traits = read_overtaken
    assert catalog.uncarried({VMDK}) == set()
    assert catalog.carried_traits() == {RAW, VMDK}
    assert catalog.carried(VMDK) is True
    assert placement.requests == 2


def test_every_rule_has_a_test_named_after_it():
    tests = {name for name in globals() if name.startswith('test_rule_')}
    assert tests == {'test_rule_' + rule.replace('-', '_')
                     for rule in trait_catalog.RULES}


def test_a_format_that_appears_is_booted_by_the_next_boot():
    placement = Placement(carried={RAW})
    image_filter = image_type_support.RequireImageTypeSupport(
        settings.FilterSettings.defaults(image_type_enabled=True),
        catalog=catalog_over(placement))
    with pytest.raises(filter_exceptions.NoValidHost,
                       match='No compute host boots vmdk images'):
        image_filter(None, our_filters.RequestSpec.for_boot('vmdk'))
    placement.carried.add(VMDK)
    spec = our_filters.RequestSpec.for_boot('vmdk')
    assert image_filter(None, spec)
    assert spec.root_required == {VMDK}


def test_an_image_property_trait_that_appears_is_met_by_the_next_boot():
    bus = 'COMPUTE_STORAGE_BUS_SCSI'
    placement = Placement(known={bus}, carried={RAW})
    image_filter = image_metadata_prefilter.ImageMetadataPrefilter(
        settings.FilterSettings.defaults(image_metadata_families=('storage_bus',)),
        catalog=catalog_over(placement))
    scsi = {'hw_disk_bus': 'scsi'}
    with pytest.raises(filter_exceptions.NoValidHost, match=bus):
        image_filter(None, our_filters.RequestSpec.for_boot(
            'raw', properties=scsi))
    placement.carried.add(bus)
    spec = our_filters.RequestSpec.for_boot('raw', properties=scsi)
    assert image_filter(None, spec)
    assert spec.root_required == {bus}


def test_a_reserved_trait_placement_learns_is_seen_by_the_next_boot():
    """Creating the trait failed at start-up; the reporter has since
    created it and tagged a host: no "does not know yet" from memory."""
    placement = Placement(creatable=False)
    catalog = catalog_over(placement)
    image_filter = isolation.IsolateImageProperties(
        settings.FilterSettings.defaults(isolation_enabled=True,
                                isolation_rules=('CUSTOM_TROVE',)),
        catalog=catalog)
    tagged = {'trait:CUSTOM_TROVE': 'required'}
    with pytest.raises(filter_exceptions.NoValidHost,
                       match='does not know yet'):
        image_filter(None, our_filters.RequestSpec.for_boot(
            'raw', extra_specs=tagged))
    placement.known.add('CUSTOM_TROVE')
    placement.carried.add('CUSTOM_TROVE')
    spec = our_filters.RequestSpec.for_boot('raw', extra_specs=tagged)
    assert image_filter(None, spec)
    assert spec.root_required == {'CUSTOM_TROVE'}


def test_rule_failure_remembered(caplog):
    clock = Clock()
    placement = Placement(carried={RAW})
    placement.down = True
    catalog = catalog_over(placement, clock)
    caplog.set_level(logging.WARNING, trait_catalog.__name__)
    for _ in range(50):
        assert catalog.carried(VMDK) is None  # the query decides
    assert placement.requests == 1
    assert len(caplog.records) == 1  # one warning, not one per boot
    clock.now += HOUR - 1
    assert catalog.carried(VMDK) is None
    assert placement.requests == 1
    placement.down = False
    clock.now += 1
    assert catalog.carried(VMDK) is False  # asked again, and answered
    assert placement.requests == 2


def test_rule_outage_counts_as_known():
    placement = Placement(known={'HW_ARCH_X86_64'})
    placement.down = True
    catalog = catalog_over(placement)
    for _ in range(50):
        assert catalog.known({'HW_ARCH_X86_64'}) == {'HW_ARCH_X86_64'}
        assert catalog.known({'HW_ARCH_X86_64'}, fresh=True) == {
            'HW_ARCH_X86_64'}
    assert placement.requests == 1


def test_while_placement_is_down_the_three_filters_add_no_request():
    from image_type_filter.scheduler import pipeline as filter_pipeline
    placement = Placement(carried={RAW})
    pipeline = filter_pipeline.RequestFilterPipeline.from_settings(
        settings.FilterSettings.defaults(
            image_type_enabled=True, isolation_enabled=True,
            isolation_rules=('CUSTOM_TROVE',),
            image_metadata_families=('architecture', 'storage_bus'),
            traits_refresh_interval=HOUR),
        placement=placement)
    started = placement.requests  # creating the reserved trait
    placement.down = True
    for _ in range(30):
        pipeline(None, our_filters.RequestSpec.for_boot(
            'vmdk', properties={'hw_architecture': 'aarch64',
                                'hw_disk_bus': 'scsi'},
            extra_specs={'trait:CUSTOM_TROVE': 'required'}))
    assert placement.requests - started == 1
