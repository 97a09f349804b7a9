"""Isolation rules: parsing and matching."""

import types

import pytest

from image_type_common import exceptions
from image_type_filter import conf as itf_conf
from image_type_filter.scheduler import isolation
from image_type_filter.scheduler import request_spec as rs


def test_parse_rules():
    rules = isolation.parse_rules(['trove=true:CUSTOM_TROVE',
                                   ' gpu : CUSTOM_GPU '])
    assert rules == (isolation.Rule('trove', 'true', 'CUSTOM_TROVE'),
                     isolation.Rule('gpu', None, 'CUSTOM_GPU'))
    assert str(rules[0]) == 'trove=true:CUSTOM_TROVE'


@pytest.mark.parametrize('bad', ['trove=true', 'trove:HW_CPU_X86_AVX2',
                                 ':CUSTOM_X', 'a:custom_lower',
                                 'a:CUSTOM_X:CUSTOM_Y'])
def test_bad_rules_are_config_errors(bad):
    with pytest.raises(exceptions.ConfigError, match='KEY'):
        isolation.parse_rules([bad])


@pytest.mark.parametrize('properties,matches', [
    ({'trove': 'true'}, True), ({'trove': 'True'}, True),
    ({'trove': 'false'}, False), ({}, False), (None, False),
    (types.SimpleNamespace(trove='true'), True),  # Nova's ImageMetaProps
    (types.SimpleNamespace(), False),
])
def test_rule_with_value(properties, matches):
    assert isolation.Rule('trove', 'true', 'CUSTOM_TROVE').matches(
        properties) is matches


def test_key_only_rule_matches_any_value():
    rule = isolation.Rule('gpu', None, 'CUSTOM_GPU')
    assert rule.matches({'gpu': 'anything'})
    assert not rule.matches({'other': 'x'})


def make_filter(enabled=True, rules=('trove=true:CUSTOM_TROVE',
                                     'db=mysql:CUSTOM_TROVE',
                                     'gpu:CUSTOM_GPU')):
    return isolation.IsolateImageProperties(itf_conf.new_conf(
        image_isolation__enabled=enabled, image_isolation__rules=list(rules)))


def test_matching_requires_and_the_rest_forbids():
    spec = rs.RequestSpec.for_boot('raw', properties={'db': 'mysql'})
    assert make_filter()(None, spec) is True
    assert spec.root_required == {'CUSTOM_TROVE'}
    assert spec.root_forbidden == {'CUSTOM_GPU'}


def test_untagged_image_forbids_every_rule_trait():
    spec = rs.RequestSpec.for_boot('raw')
    make_filter()(None, spec)
    assert spec.root_required == set()
    assert spec.root_forbidden == {'CUSTOM_TROVE', 'CUSTOM_GPU'}


def test_volume_backed_still_applies():
    spec = rs.RequestSpec.for_boot('raw', is_bfv=True,
                                   properties={'gpu': '1'})
    assert make_filter()(None, spec)
    assert spec.root_required == {'CUSTOM_GPU'}


def test_disabled_does_nothing():
    spec = rs.RequestSpec.for_boot('raw')
    assert make_filter(enabled=False)(None, spec) is False
    assert spec.root_forbidden == set()


def test_describe_names_the_rules():
    assert make_filter().describe_trait('CUSTOM_TROVE') == (
        'image_isolation rule trove=true:CUSTOM_TROVE, db=mysql:CUSTOM_TROVE')
    assert make_filter().describe_trait('CUSTOM_OTHER') is None
