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

"""Log-only mode's building blocks, Nova-free: ``outcome`` works out what
the filters would add or refuse and leaves the request as it was, and
every line ``log_only`` writes matches the one pattern the gate counts.

The traits expected are os-traits' own names for the formats and Nova's
``trait:X=required`` spelling for isolation."""

import dataclasses

import os_traits
import pytest

from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import log_only
from image_type_filter.scheduler import pipeline as filter_pipeline

ALL_ON = settings.FilterSettings.defaults(
    image_type_enabled=True, isolation_enabled=True,
    isolation_rules=('CUSTOM_TROVE',), unknown_format='reject')
TAG = {'trait:CUSTOM_TROVE': 'required'}


def snapshot(spec):
    return {name: set(getattr(spec, name)) for name in
            filter_pipeline.CONSTRAINTS}


@pytest.fixture(scope='module')
def pipeline():
    return filter_pipeline.RequestFilterPipeline.from_settings(ALL_ON)


def test_outcome_says_what_would_be_added_and_changes_nothing(pipeline):
    spec = our_filters.RequestSpec.for_boot('vmdk')
    before = snapshot(spec)
    outcome = pipeline.outcome(None, spec)
    assert snapshot(spec) == before
    assert outcome == filter_pipeline.Outcome(added={
        'root_required': (os_traits.COMPUTE_IMAGE_TYPE_VMDK,),
        'root_forbidden': ('CUSTOM_TROVE',)})
    # The same filters, applied, add exactly that.
    pipeline(None, spec)
    assert spec.root_required == {os_traits.COMPUTE_IMAGE_TYPE_VMDK}
    assert spec.root_forbidden == {'CUSTOM_TROVE'}


def test_outcome_counts_only_what_the_request_lacked(pipeline):
    # Nova's own image-type filter ran first and added the format's trait.
    spec = our_filters.RequestSpec.for_boot('raw', extra_specs=TAG)
    spec.root_required.add(os_traits.COMPUTE_IMAGE_TYPE_RAW)
    outcome = pipeline.outcome(None, spec)
    assert outcome.added == {'root_required': ('CUSTOM_TROVE',)}
    assert spec.root_required == {os_traits.COMPUTE_IMAGE_TYPE_RAW}


def test_a_refusal_is_an_outcome_not_an_error(pipeline):
    spec = our_filters.RequestSpec.for_boot('qed')
    outcome = pipeline.outcome(None, spec)
    assert outcome.added == {}
    assert "'qed' is not a known image type" in outcome.refusal
    assert snapshot(spec) == snapshot(our_filters.RequestSpec.for_boot('qed'))


@pytest.mark.parametrize('outcome,verdict,detail', [
    (filter_pipeline.Outcome(added={
        'root_required': ('COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_TROVE'),
        'root_forbidden': ('CUSTOM_GPU',)}), 'would add',
     'root_required=COMPUTE_IMAGE_TYPE_RAW,CUSTOM_TROVE '
     'root_forbidden=CUSTOM_GPU'),
    (filter_pipeline.Outcome(refusal='No compute host boots vhd images.'),
     'would refuse', 'No compute host boots vhd images.'),
    (filter_pipeline.Outcome(), 'would change nothing', None),
])
def test_every_boot_line_matches_the_pattern(outcome, verdict, detail):
    line = log_only.boot_line('c0a1', outcome)
    assert line.startswith('image-type-filter log-only: server c0a1: ')
    match = log_only.PATTERN.fullmatch(line)
    assert match and match['server'] == 'c0a1'
    assert (match['verdict'], match['detail']) == (verdict, detail)


def test_rebuild_lines_match_the_pattern():
    refused = log_only.PATTERN.fullmatch(log_only.rebuild_line(
        's1', 'img', 'host-uuid', 'the new image needs X'))
    assert refused['verdict'] == 'would refuse'
    assert refused['detail'] == ('rebuild to image img on host host-uuid: '
                                 'the new image needs X')
    assert log_only.PATTERN.fullmatch(log_only.rebuild_line(
        's1', 'img', 'h', None))['verdict'] == 'would change nothing'


def test_enforce_is_read_from_the_config_and_defaults_to_true():
    from tests import scheduler_conf

    assert settings.FilterSettings.from_conf(scheduler_conf.new_conf()).enforce
    off = settings.FilterSettings.from_conf(scheduler_conf.new_conf(
        image_type_filter__enforce=False, image_isolation__enabled=True,
        image_isolation__rules=['CUSTOM_TROVE']))
    assert off.enforce is False
    assert off.isolation_enforced is False
    assert dataclasses.replace(off, enforce=True).isolation_enforced
