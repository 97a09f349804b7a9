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

"""What candidates knows of nova-scheduler: its nova.conf, its release."""

import pytest

from image_type_filter.client import nova_request_filters as nova_filters
from image_type_filter.diagnostics import nova_scheduler


def test_options_come_from_nova_conf(tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text('[scheduler]\nimage_metadata_prefilter = True\n'
                    'max_placement_results = 50\n'
                    '[workarounds]\ndisable_fallback_pcpu_query = True\n'
                    '[filter_scheduler]\n'
                    'available_filters = nova.scheduler.filters.all_filters\n'
                    'available_filters = image_type_filter.nova.all_filters\n'
                    '[placement]\nauth_type = password\n')
    options, ours, where = nova_scheduler.read_options([str(path)])
    assert options[('scheduler', 'image_metadata_prefilter')] is True
    assert options[('scheduler', 'max_placement_results')] == 50
    assert options[('workarounds', 'disable_fallback_pcpu_query')] is True
    assert options[('scheduler', 'enable_isolated_aggregate_filtering')] \
        is False
    assert ours is True
    assert where == str(path)


def test_without_nova_conf_nova_defaults_and_not_our_filters():
    options, ours, where = nova_scheduler.read_options([])
    assert options == nova_filters.NOVA_OPTIONS
    assert ours is False
    assert 'defaults' in where


def test_a_bad_value_names_the_option(tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text('[scheduler]\nmax_placement_results = many\n')
    with pytest.raises(Exception) as err:
        nova_scheduler.read_options([str(path)])
    assert 'max_placement_results' in str(err.value)
    assert err.value.exit_code == 2


@pytest.mark.parametrize('version,release', [
    ((2, 100), 32), ((2, 103), 33), ((2, 104), 34), ((2, 120), 34),
    ((2, 95), 31)])
def test_the_release_from_the_compute_api(version, release):
    found, why = nova_scheduler.release_for(version)
    assert found == release
    assert '%d.%d' % version in why


def test_2_100_says_it_may_be_31():
    _, why = nova_scheduler.release_for((2, 100))
    assert 'Nova 31 or 32' in why and '--nova-release 31' in why


def test_the_release_can_be_given():
    assert nova_scheduler.release_for((2, 104), 31) == (
        31, '--nova-release 31')


def test_owner_nova_before_34_and_given():
    assert nova_scheduler.owner_nova(33, None, {})[0] is False
    assert nova_scheduler.owner_nova(34, None, {}, 'required')[0] is True
    assert nova_scheduler.owner_nova(34, None, {}, 'not-required')[0] \
        is False
