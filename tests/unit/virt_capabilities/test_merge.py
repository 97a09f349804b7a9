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

"""The owner rule and the pure merge: only what it owns ever changes."""

import pytest

from image_type_common import image_types
from virt_capabilities import merge

RAW, QCOW2, VMDK = (image_types.TRAIT_BY_FORMAT[f]
                    for f in ('raw', 'qcow2', 'vmdk'))
VMVGA = 'COMPUTE_GRAPHICS_MODEL_VMVGA'
IDE = 'COMPUTE_STORAGE_BUS_IDE'
NOVA_COMPUTE_S = {'COMPUTE_NODE', 'HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED'}


def test_target_replaces_only_the_owned_namespace():
    ownership = merge.OwnerRule(image_types={RAW, QCOW2},
                                owns_image_types=True).on_provider()
    current = {VMDK, RAW, 'HW_CPU_X86_AVX2', 'CUSTOM_FOO',
               'COMPUTE_STATUS_DISABLED'}
    assert ownership.target(current) == {
        RAW, QCOW2, 'HW_CPU_X86_AVX2', 'CUSTOM_FOO', 'COMPUTE_STATUS_DISABLED'}


def test_custom_traits_owned_only_when_configured_or_set_before():
    rule = merge.OwnerRule(image_types={RAW}, owns_image_types=True,
                           custom={'CUSTOM_TROVE'})
    ownership = rule.on_provider(record={'CUSTOM_TROVE', 'CUSTOM_OLD'})
    current = {'CUSTOM_OLD', 'CUSTOM_OTHERS', VMDK}
    assert ownership.target(current) == {RAW, 'CUSTOM_TROVE', 'CUSTOM_OTHERS'}


def test_in_sync_filter_requires_desired_and_forbids_the_rest():
    ownership = merge.OwnerRule(image_types={RAW}, owns_image_types=True
                                ).on_provider(record={'CUSTOM_OLD'})
    tokens = ownership.in_sync_filter(absent={VMDK})
    assert tokens[0] == RAW
    assert '!CUSTOM_OLD' in tokens
    assert '!' + QCOW2 in tokens
    assert '!' + VMDK not in tokens and '!' + RAW not in tokens
    assert len(tokens) == len(image_types.TRAITS) - 1 + 1


def test_combined_owns_what_any_provider_owns():
    rule = merge.OwnerRule(custom={'CUSTOM_A'})
    both = merge.combined([rule.on_provider(record={'CUSTOM_OLD1'}),
                           rule.on_provider(record={'CUSTOM_OLD2'})])
    assert both.in_sync_filter() == ['CUSTOM_A', '!CUSTOM_OLD1',
                                     '!CUSTOM_OLD2']


def test_diff_is_sorted():
    assert merge.diff({'B', 'C'}, {'A', 'B'}) == (['A'], ['C'])


def test_when_nova_compute_owns_image_types_they_are_never_touched():
    ownership = merge.OwnerRule(custom={'CUSTOM_TROVE'}).on_provider()
    current = {VMDK, 'HW_CPU_X86_AVX2'}
    assert ownership.target(current) == {VMDK, 'HW_CPU_X86_AVX2',
                                         'CUSTOM_TROVE'}
    assert ownership.in_sync_filter() == ['CUSTOM_TROVE']


def test_a_standard_trait_is_never_owned_whatever_ownership_is_told():
    """What nova-compute sets (COMPUTE_STATUS_DISABLED keeps a disabled host
    out of scheduling) is never the reporter's, even if handed over as a
    trait it set before, to the rule or to an Ownership directly."""
    rule = merge.OwnerRule(image_types={RAW}, owns_image_types=True)
    for ownership in (rule.on_provider(record=NOVA_COMPUTE_S |
                                       {'CUSTOM_OLD'}),
                      merge.Ownership(desired=frozenset({RAW}),
                                      owned=frozenset(NOVA_COMPUTE_S |
                                                      {RAW, 'CUSTOM_OLD'}))):
        current = NOVA_COMPUTE_S | {RAW, 'CUSTOM_OLD'}
        assert ownership.target(current) == NOVA_COMPUTE_S | {RAW}
        assert not any(ownership.owns(t) for t in NOVA_COMPUTE_S)
        assert not any(t.lstrip('!') in NOVA_COMPUTE_S
                       for t in ownership.in_sync_filter())


def test_the_rule_refuses_what_it_cannot_own():
    """The owner rule is decided once, by the plan: a rule that keeps what
    it does not own is a bug to surface, never a trait to write."""
    with pytest.raises(ValueError, match='without owning them'):
        merge.OwnerRule(image_types={RAW})
    with pytest.raises(ValueError, match='not custom'):
        merge.OwnerRule(custom={'HW_CPU_X86_AVX2'})
    with pytest.raises(ValueError, match='not image-metadata'):
        merge.OwnerRule(metadata={'HW_CPU_X86_AVX2'})
    with pytest.raises(ValueError, match='outside the owned namespace'):
        merge.Ownership(desired=frozenset({'HW_CPU_X86_AVX2'}),
                        owned=frozenset({'HW_CPU_X86_AVX2'}))


def test_a_trait_another_reporter_records_is_not_owned_once_dropped():
    rule = merge.OwnerRule(custom={'CUSTOM_MINE'})
    ownership = rule.on_provider(record={'CUSTOM_MINE', 'CUSTOM_SHARED'},
                                 others={'CUSTOM_SHARED'})
    assert not ownership.owns('CUSTOM_SHARED')
    assert ownership.owns('CUSTOM_MINE')


def test_only_the_drivers_metadata_traits_are_ever_remembered():
    rule = merge.OwnerRule(metadata_ownable={VMVGA})
    assert rule.remembered({VMVGA, IDE, 'CUSTOM_A', 'COMPUTE_NODE'}) == {
        VMVGA, 'CUSTOM_A'}


def test_to_record_keeps_a_metadata_trait_only_once_it_set_it():
    rule = merge.OwnerRule(custom={'CUSTOM_A'}, metadata={VMVGA, IDE},
                           metadata_ownable={VMVGA, IDE})
    # IDE was there before (somebody else's): never recorded as its own.
    assert rule.to_record(added=[VMVGA]) == {'CUSTOM_A', VMVGA}
    assert rule.to_record(record={VMVGA}) == {'CUSTOM_A', VMVGA}
    # One Placement does not know is not on the provider: not recorded.
    assert rule.to_record(record={VMVGA}, missing={VMVGA}) == {'CUSTOM_A'}


def test_removal_owns_its_record_and_the_image_types_it_keeps_only():
    rule = merge.OwnerRule(image_types={RAW}, owns_image_types=True,
                           custom={'CUSTOM_A'})
    removal = rule.removal(record={'CUSTOM_A', 'CUSTOM_OLD'},
                           others={'CUSTOM_OLD'})
    current = {RAW, VMDK, 'CUSTOM_A', 'CUSTOM_OLD', 'COMPUTE_NODE'}
    # VMDK: not one it keeps (nova-compute's, if anybody's); CUSTOM_OLD:
    # another reporter's record holds it.
    assert removal.target(current) == {VMDK, 'CUSTOM_OLD', 'COMPUTE_NODE'}
    by_default = merge.OwnerRule(custom={'CUSTOM_A'})
    assert by_default.removal(record={'CUSTOM_A'}).target(current) == (
        current - {'CUSTOM_A'})
