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

"""Isolation rules: parsing, matching, tags, and traits Placement lacks."""

import pytest

from image_type_common import exceptions
from image_type_filter import exceptions as filter_exceptions
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import isolation
from image_type_filter.scheduler import trait_catalog


def test_parse_rules():
    rules = isolation.parse_rules(['trove=true:CUSTOM_TROVE',
                                   ' gpu : CUSTOM_GPU ', ' CUSTOM_DB '])
    assert rules == (isolation.Rule('CUSTOM_TROVE', 'trove', 'true'),
                     isolation.Rule('CUSTOM_GPU', 'gpu'),
                     isolation.Rule('CUSTOM_DB'))
    assert [str(r) for r in rules] == ['trove=true:CUSTOM_TROVE',
                                       'gpu:CUSTOM_GPU', 'CUSTOM_DB']


@pytest.mark.parametrize('bad', ['trove=true', 'trove:HW_CPU_X86_AVX2',
                                 ':CUSTOM_X', 'a:custom_lower',
                                 'a:CUSTOM_X:CUSTOM_Y', 'HW_CPU_X86_AVX2',
                                 'CUSTOM_lower'])
def test_bad_rules_are_config_errors_naming_themselves(bad):
    with pytest.raises(exceptions.ConfigError) as err:
        isolation.parse_rules([bad])
    assert repr(bad) in str(err.value)


def test_a_rule_on_a_property_nova_drops_is_refused_naming_the_tag():
    nova_keeps = {'os_distro', 'hw_machine_type', 'traits_required'}
    assert isolation.parse_rules(['os_distro=rhel:CUSTOM_RHEL'], nova_keeps)
    with pytest.raises(exceptions.ConfigError) as err:
        isolation.parse_rules(['trove=true:CUSTOM_TROVE'], nova_keeps)
    message = str(err.value)
    assert 'Nova drops' in message and '\n' not in message
    assert 'trait:CUSTOM_TROVE=required' in message


@pytest.mark.parametrize('properties,matches', [
    ({'trove': 'true'}, True), ({'trove': 'True'}, True),
    ({'trove': 'false'}, False), ({}, False), (None, False),
    ({'trove': ['true']}, False), ({'trove': None}, False),
])
def test_rule_with_value(properties, matches):
    assert isolation.Rule('CUSTOM_TROVE', 'trove', 'true').matches(
        properties) is matches


def test_key_only_rule_matches_any_value_and_bare_rule_nothing():
    assert isolation.Rule('CUSTOM_GPU', 'gpu').matches({'gpu': 'anything'})
    assert not isolation.Rule('CUSTOM_GPU', 'gpu').matches({'other': 'x'})
    assert not isolation.Rule('CUSTOM_GPU').matches({'CUSTOM_GPU': 'x'})


def make_filter(enabled=True, rules=('trove=true:CUSTOM_TROVE',
                                     'db=mysql:CUSTOM_TROVE',
                                     'gpu:CUSTOM_GPU', 'CUSTOM_DB'),
                placement=None):
    filter_settings = settings.FilterSettings.defaults(
        isolation_enabled=enabled, isolation_rules=tuple(rules))
    return isolation.IsolateImageProperties(
        filter_settings,
        trait_catalog.for_placement(placement, filter_settings))


def test_matching_requires_and_the_rest_forbids():
    spec = our_filters.RequestSpec.for_boot('raw', properties={'db': 'mysql'})
    assert make_filter()(None, spec) is True
    assert spec.root_required == {'CUSTOM_TROVE'}
    assert spec.root_forbidden == {'CUSTOM_GPU', 'CUSTOM_DB'}


@pytest.mark.parametrize('where', ['image', 'flavor', 'granular flavor'])
def test_a_trait_tag_asks_for_the_reserved_trait(where):
    tag = {'image': ('trait:CUSTOM_DB', 'required'),
           'flavor': ('trait:CUSTOM_DB', 'required'),
           'granular flavor': ('trait1:CUSTOM_DB', 'required')}[where]
    spec = our_filters.RequestSpec.for_boot(
        'raw', properties=dict([tag]) if where == 'image' else {},
        extra_specs=dict([tag]) if where != 'image' else {})
    make_filter()(None, spec)
    assert spec.root_required == {'CUSTOM_DB'}
    assert spec.root_forbidden == {'CUSTOM_TROVE', 'CUSTOM_GPU'}


@pytest.mark.parametrize('key', ['trait1:CUSTOM_DB', 'trait_x:CUSTOM_DB',
                                 'traits_required'])
def test_an_image_asks_only_with_the_unsuffixed_tag(key):
    """An image takes only trait:X=required (nova/objects/image_meta.py):
    Nova drops a granular trait1:X image property, so that image is not
    meant for the reserved hosts and must not be let onto them."""
    spec = our_filters.RequestSpec(
        image=our_filters.ImageMeta('raw', {key: 'required'}))
    make_filter()(None, spec)
    assert spec.root_required == set()
    assert 'CUSTOM_DB' in spec.root_forbidden


@pytest.mark.parametrize('value', ['Required', 'REQUIRED', ' required'])
def test_a_tag_is_read_exactly_as_nova_reads_it(value):
    """nova/objects/image_meta.py and request_spec.py compare with
    'required' exactly: anything else asks Nova for nothing, so it must not
    ask us either (the request would otherwise be let onto reserved hosts
    Nova's query never asked for)."""
    spec = our_filters.RequestSpec.for_boot(
        'raw', properties={'trait:CUSTOM_DB': value})
    make_filter()(None, spec)
    assert spec.root_required == set()
    assert 'CUSTOM_DB' in spec.root_forbidden


def test_a_forbidden_tag_or_an_unreserved_trait_asks_for_nothing():
    spec = our_filters.RequestSpec.for_boot(
        'raw', properties={'trait:CUSTOM_OTHER': 'required'},
        extra_specs={'trait:CUSTOM_DB': 'forbidden'})
    make_filter()(None, spec)
    assert spec.root_required == set()
    assert spec.root_forbidden == {'CUSTOM_TROVE', 'CUSTOM_GPU', 'CUSTOM_DB'}


def test_untagged_image_forbids_every_reserved_trait():
    spec = our_filters.RequestSpec.for_boot('raw')
    make_filter()(None, spec)
    assert spec.root_required == set()
    assert spec.root_forbidden == {'CUSTOM_TROVE', 'CUSTOM_GPU', 'CUSTOM_DB'}


@pytest.mark.parametrize('spec', [
    our_filters.RequestSpec(image=None),
    our_filters.RequestSpec(image=our_filters.ImageMeta('raw', None),
                            flavor=None),
    our_filters.RequestSpec(
        image=our_filters.ImageMeta('raw', {None: 1, 3: [], 'gpu': b'x'}),
        flavor=our_filters.Flavor({'trait:': 'required', 7: 'required'})),
])
def test_odd_requests_never_raise(spec):
    assert make_filter()(None, spec) is True
    assert 'CUSTOM_DB' in spec.root_forbidden


def test_volume_backed_still_applies():
    spec = our_filters.RequestSpec.for_boot('raw', is_bfv=True,
                                            properties={'gpu': '1'})
    assert make_filter()(None, spec)
    assert spec.root_required == {'CUSTOM_GPU'}


def test_disabled_does_nothing_but_still_validates_rules():
    spec = our_filters.RequestSpec.for_boot('raw')
    assert make_filter(enabled=False)(None, spec) is False
    assert spec.root_forbidden == set()
    with pytest.raises(exceptions.ConfigError, match='nope'):
        make_filter(enabled=False, rules=['nope'])


def test_describe_names_the_rules():
    assert make_filter().describe_trait('CUSTOM_TROVE') == (
        'image_isolation rule trove=true:CUSTOM_TROVE, db=mysql:CUSTOM_TROVE')
    assert make_filter().describe_trait('CUSTOM_OTHER') is None


class TraitsPlacementKnows:
    """Answers like Placement, from the sets it is given: which traits
    exist, which some provider carries; ``creatable=False`` refuses
    ``PUT /traits`` as a Placement that cannot be reached would."""

    def __init__(self, known, carried=(), creatable=True):
        self.known = set(known)
        self.carried = set(carried)
        self.creatable = creatable
        self.asked = []
        self.associated_asked = 0

    def list_traits(self, names):
        self.asked.append(sorted(names))
        return set(names) & self.known

    def create_trait(self, name):
        if not self.creatable:
            raise exceptions.PlacementUnavailable('cannot reach Placement')
        self.known.add(name)

    def list_associated_traits(self):
        self.associated_asked += 1
        return set(self.carried)


def test_reserved_traits_are_created_so_isolation_holds_at_once():
    """Placement knew none of them before the filter started: untagged
    requests forbid every one from the first request on."""
    placement = TraitsPlacementKnows(set())
    image_filter = make_filter(placement=placement)
    assert placement.known == {'CUSTOM_TROVE', 'CUSTOM_GPU', 'CUSTOM_DB'}
    spec = our_filters.RequestSpec.for_boot('raw')
    image_filter(None, spec)
    assert spec.root_forbidden == {'CUSTOM_TROVE', 'CUSTOM_GPU', 'CUSTOM_DB'}
    assert placement.asked == []  # nothing cached as unknown


def test_a_trait_placement_lacks_is_forbidden_nowhere():
    placement = TraitsPlacementKnows({'CUSTOM_TROVE', 'CUSTOM_GPU'},
                                     creatable=False)
    spec = our_filters.RequestSpec.for_boot('raw')
    make_filter(placement=placement)(None, spec)
    assert spec.root_forbidden == {'CUSTOM_TROVE', 'CUSTOM_GPU'}


def test_asking_for_a_trait_placement_lacks_is_no_valid_host_naming_it():
    placement = TraitsPlacementKnows({'CUSTOM_TROVE', 'CUSTOM_GPU'},
                                     creatable=False)
    spec = our_filters.RequestSpec.for_boot(
        'raw', extra_specs={'trait:CUSTOM_DB': 'required'})
    with pytest.raises(filter_exceptions.NoValidHost, match='CUSTOM_DB'):
        make_filter(placement=placement)(None, spec)


def test_catalog_asks_again_for_missing_traits_only_after_recheck():
    now = [0.0]
    placement = TraitsPlacementKnows({'CUSTOM_A'})
    catalog = trait_catalog.TraitCatalog(placement, interval=30,
                                         clock=lambda: now[0])
    assert catalog.known({'CUSTOM_A', 'CUSTOM_B'}) == {'CUSTOM_A'}
    assert catalog.known({'CUSTOM_A', 'CUSTOM_B'}) == {'CUSTOM_A'}
    assert placement.asked == [['CUSTOM_A', 'CUSTOM_B']]
    placement.known.add('CUSTOM_B')  # the reporter created it
    now[0] += 30
    assert catalog.known({'CUSTOM_A', 'CUSTOM_B'}) == {'CUSTOM_A',
                                                       'CUSTOM_B'}
    now[0] += 3600
    assert catalog.known({'CUSTOM_A', 'CUSTOM_B'}) == {'CUSTOM_A',
                                                       'CUSTOM_B'}
    assert placement.asked == [['CUSTOM_A', 'CUSTOM_B'], ['CUSTOM_B']]


def test_asking_for_a_trait_no_host_carries_says_so_then_sees_the_host():
    """Each refusal is decided on a fresh read; the boot after a host
    starts carrying the trait lands, however long the interval."""
    placement = TraitsPlacementKnows(set(), carried={'COMPUTE_NODE'})
    catalog = trait_catalog.TraitCatalog(placement, interval=3600,
                                         clock=lambda: 0.0)
    image_filter = isolation.IsolateImageProperties(
        settings.FilterSettings.defaults(isolation_enabled=True,
                                isolation_rules=('CUSTOM_TROVE',)),
        catalog=catalog)
    tagged = {'trait:CUSTOM_TROVE': 'required'}
    for _ in range(3):
        with pytest.raises(filter_exceptions.NoValidHost,
                           match='No compute host carries reserved trait'
                                 r'\(s\) CUSTOM_TROVE'):
            image_filter(None, our_filters.RequestSpec.for_boot(
                'raw', extra_specs=tagged))
    assert placement.associated_asked == 3  # one read per refusal
    placement.carried.add('CUSTOM_TROVE')  # a reporter tagged a host
    spec = our_filters.RequestSpec.for_boot('raw', extra_specs=tagged)
    assert image_filter(None, spec)
    assert spec.root_required == {'CUSTOM_TROVE'}
    image_filter(None, our_filters.RequestSpec.for_boot(
        'raw', extra_specs=tagged))
    assert placement.associated_asked == 4  # none once seen carried


def test_the_pipelines_filters_share_one_cached_read():
    """Both filters ask "does any host carry it?"; the pipeline gives them
    one catalogue, so a boot costs one GET /traits?associated=true at most
    per interval, not one per filter."""
    from image_type_filter.scheduler import pipeline as filter_pipeline
    placement = TraitsPlacementKnows(set(), carried={
        'COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_TROVE'})
    pipeline = filter_pipeline.RequestFilterPipeline.from_settings(
        settings.FilterSettings.defaults(image_type_enabled=True,
                                isolation_enabled=True,
                                isolation_rules=('CUSTOM_TROVE',)),
        placement=placement)
    catalogs = {id(f.catalog) for _, f in pipeline.filters}
    assert len(catalogs) == 1
    spec = our_filters.RequestSpec.for_boot(
        'raw', extra_specs={'trait:CUSTOM_TROVE': 'required'})
    pipeline(None, spec)
    assert spec.root_required == {'COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_TROVE'}
    assert placement.associated_asked == 1
