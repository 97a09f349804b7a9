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

"""The allocation-candidate query of ``candidates --disk-format``:
deterministic, encoded, per microversion."""

import logging
from urllib import parse

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
import pytest

from image_type_common import image_types
from image_type_filter import exceptions
from image_type_filter import settings as settings_mod
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import image_type_support
from tests import scheduler_conf

read = settings_mod.FilterSettings.from_conf

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 5}


def spec(disk_format='raw', **kwargs):
    kwargs.setdefault('resources', RESOURCES)
    return our_filters.RequestSpec.for_boot(disk_format, **kwargs)


def test_root_traits_go_in_root_required():
    request = spec(root_required={'COMPUTE_IMAGE_TYPE_RAW'},
                   root_forbidden={'COMPUTE_STATUS_DISABLED'})
    assert our_filters.build(request) == (
        'resources=DISK_GB:5,MEMORY_MB:512,VCPU:1'
        '&root_required=COMPUTE_IMAGE_TYPE_RAW,!COMPUTE_STATUS_DISABLED')




def test_required_traits_stay_in_unsuffixed_required_silently(caplog):
    request = spec(required={'COMPUTE_IMAGE_TYPE_VMDK'})
    with caplog.at_level(logging.WARNING):
        built = our_filters.build(request)
    assert 'required=COMPUTE_IMAGE_TYPE_VMDK' in built
    assert 'root_required' not in built
    assert not caplog.records






def test_same_request_same_url():
    a = spec(root_required={'B_TRAIT', 'A_TRAIT'},
             resources={'VCPU': 1, 'DISK_GB': 5})
    b = spec(root_required={'A_TRAIT', 'B_TRAIT'},
             resources={'DISK_GB': 5, 'VCPU': 1})
    assert our_filters.build(a) == our_filters.build(b)


@pytest.mark.parametrize('bad', [
    {'root_required': {'COMPUTE_IMAGE_TYPE_RAW&limit=1'}},
    {'required': {'lower_case'}},
    {'resources': {'VCPU': 0}},
    {'resources': {'VCPU': '1'}},
])
def test_invalid_input_never_reaches_the_url(bad):
    with pytest.raises(ValueError):
        our_filters.build(spec(**bad))


def _filter_conf():
    return scheduler_conf.new_conf(
        scheduler__filter_hosts_by_image_type_support=True)


CONF = _filter_conf()
FILTER = image_type_support.RequireImageTypeSupport(read(CONF))
BASELINE = our_filters.build_params(spec())
HOSTILE = st.one_of(
    st.text(max_size=200),
    st.sampled_from(['qcow2&required=!X', 'in:RAW,QCOW2', '!qcow2',
                     'raw%00', 'raw\x00', 'RAW,VMDK', 'ｒａｗ', 'RAW ',
                     'x' * 10000]),
    st.builds(lambda f, junk: f + junk, st.sampled_from(image_types.FORMATS),
              st.text(alphabet='&=,!:%\x00 ', min_size=1, max_size=20)),
    st.sampled_from(image_types.FORMATS).map(str.upper))


@settings(max_examples=300, deadline=None)
@given(disk_format=HOSTILE)
def test_no_disk_format_changes_the_query_beyond_one_known_trait(
        disk_format):
    request = spec(disk_format)
    FILTER(None, request)
    params = our_filters.build_params(request)
    added = [p for p in params if p not in BASELINE]
    assert [k for k, _ in params if k != 'root_required'] == [
        k for k, _ in BASELINE]
    assert len(added) <= 1
    if added:
        key, value = added[0]
        assert key == 'root_required'
        assert value in image_types.TRAITS
        assert value == image_types.trait_for_format(disk_format)
    encoded = parse.parse_qsl(our_filters.build(request))
    assert [k for k, _ in encoded] == [k for k, _ in params]


def test_reject_policy_is_the_only_exception():
    conf = _filter_conf()
    conf.set_override('unknown_format', 'reject', 'image_type_filter')
    with pytest.raises(exceptions.NoValidHost,
                       match='not a known image type'):
        image_type_support.RequireImageTypeSupport(read(conf))(None, spec(
            disk_format='qcow2&x'))


REJECT_CONF = _filter_conf()
REJECT_CONF.set_override('unknown_format', 'reject', 'image_type_filter')
REJECTING = image_type_support.RequireImageTypeSupport(read(REJECT_CONF))
HUGE = ['a' * 1_000_000, 'raw' + '\x00' * 1_000_000, 'qcow2&' * 200_000,
        '%00' * 300_000, 'é' * 500_000]


@settings(max_examples=300, deadline=None)
@given(disk_format=st.one_of(HOSTILE, st.sampled_from(HUGE), st.none(),
                             st.integers(), st.binary(max_size=50)))
def test_reject_policy_raises_only_the_documented_error(disk_format):
    request = spec(disk_format)
    try:
        REJECTING(None, request)
    except exceptions.NoValidHost as exc:
        assert 'is not a known image type' in str(exc)
        assert len(str(exc)) < 400 and '\n' not in str(exc)
        assert request.root_required == set()
    else:
        assert request.root_required == {
            image_types.trait_for_format(disk_format)}


@pytest.mark.parametrize('disk_format', HUGE)
def test_megabyte_strings_add_nothing(disk_format):
    request = spec(disk_format)
    assert FILTER(None, request) is False
    assert our_filters.build_params(request) == BASELINE
