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

"""The fleet's shape: counts, node names, the boot sequence, and the
traits each group's formats and architecture mean (os-traits' own names).
"""

import collections

import os_traits
import pytest

from benchmarks.fleet import shape


@pytest.mark.parametrize('nodes', [12, 40, 1000, 1001])
def test_every_group_gets_nodes_and_they_add_up(nodes):
    counts = shape.node_counts(nodes)
    assert sum(counts.values()) == nodes
    assert set(counts) == {g.name for g in shape.GROUPS}
    assert min(counts.values()) >= 1


def test_the_full_fleet_has_the_shares():
    counts = shape.node_counts(1000)
    assert counts == {g.name: round(1000 * g.share) for g in shape.GROUPS}


def test_too_few_nodes_is_refused():
    with pytest.raises(ValueError):
        shape.node_counts(len(shape.GROUPS) - 1)


def test_the_boot_sequence_spreads_every_kind_in_its_share():
    sequence = shape.boot_sequence(300)
    assert sequence == shape.boot_sequence(300)
    counts = collections.Counter(sequence)
    assert counts == {k.name: round(300 * k.share) for k in shape.IMAGES}
    # Spread through the run: each kind is in both halves.
    assert set(sequence[:150]) == set(sequence[150:]) == set(counts)


def test_node_names_name_their_group():
    for group in shape.GROUPS:
        names = shape.node_names(group.name, 3)
        assert len(set(names)) == 3
        assert {shape.group_of(n) for n in names} == {group}
    with pytest.raises(ValueError):
        shape.group_of('itffleet1')


def test_groups_exclude_what_they_do_not_boot():
    for group in shape.GROUPS:
        assert set(group.formats) | set(group.excluded) == set(
            shape.DRIVER_FORMATS)
        assert not set(group.formats) & set(group.excluded)


def test_traits_are_os_traits_names():
    for fmt in shape.DRIVER_FORMATS:
        assert shape.format_trait(fmt) == getattr(
            os_traits, 'COMPUTE_IMAGE_TYPE_' + fmt.upper())
    assert shape.ARCH_TRAITS == {'x86_64': os_traits.HW_ARCH_X86_64,
                                 'armv7l': os_traits.HW_ARCH_ARMV7}
    assert os_traits.is_custom(shape.RESERVED_TRAIT)
    assert os_traits.is_custom(shape.REPORTED_TRAIT)


def test_images_ask_for_their_trait_as_nova_reads_it():
    trove = shape.image_kind('trove')
    assert trove.properties['trait:%s' % shape.RESERVED_TRAIT] == 'required'
    assert shape.image_kind('armv7').properties == {
        'hw_architecture': 'armv7l'}
