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

"""The pure merge rules: only the owned namespace ever changes."""

import pytest

from image_type_common import image_types
from virt_capabilities import merge

RAW, QCOW2, VMDK = (image_types.TRAIT_BY_FORMAT[f]
                    for f in ('raw', 'qcow2', 'vmdk'))


def test_target_replaces_only_the_owned_namespace():
    ownership = merge.Ownership(desired=frozenset({RAW, QCOW2}))
    current = {VMDK, RAW, 'HW_CPU_X86_AVX2', 'CUSTOM_FOO',
               'COMPUTE_STATUS_DISABLED'}
    assert ownership.target(current) == {
        RAW, QCOW2, 'HW_CPU_X86_AVX2', 'CUSTOM_FOO', 'COMPUTE_STATUS_DISABLED'}


def test_custom_traits_owned_only_when_configured_or_set_before():
    ownership = merge.Ownership(desired=frozenset({RAW, 'CUSTOM_TROVE'}),
                                owned_custom=frozenset({'CUSTOM_TROVE',
                                                        'CUSTOM_OLD'}))
    current = {'CUSTOM_OLD', 'CUSTOM_OTHERS', VMDK}
    assert ownership.target(current) == {RAW, 'CUSTOM_TROVE', 'CUSTOM_OTHERS'}


def test_in_sync_filter_requires_desired_and_forbids_the_rest():
    ownership = merge.Ownership(desired=frozenset({RAW}),
                                owned_custom=frozenset({'CUSTOM_OLD'}))
    tokens = ownership.in_sync_filter(absent={VMDK})
    assert tokens[0] == RAW
    assert '!CUSTOM_OLD' in tokens
    assert '!' + QCOW2 in tokens
    assert '!' + VMDK not in tokens and '!' + RAW not in tokens
    assert len(tokens) == len(image_types.TRAITS) - 1 + 1


def test_diff_is_sorted():
    assert merge.diff({'B', 'C'}, {'A', 'B'}) == (['A'], ['C'])


def test_ownership_state_writes_once_for_many_providers(tmp_path,
                                                        monkeypatch):
    from virt_capabilities import ownership_state
    state = ownership_state.OwnershipState(str(tmp_path / 'state.json'))
    saves = []
    real_save = state._save
    monkeypatch.setattr(state, '_save',
                        lambda changes: saves.append(real_save(changes)))
    state.record_many(['u%d' % i for i in range(1000)], {'CUSTOM_A'})
    state.record_many(['u%d' % i for i in range(1000)], {'CUSTOM_A'})
    assert len(saves) == 1
    again = ownership_state.OwnershipState(str(tmp_path / 'state.json'))
    assert again.owned('u999') == {'CUSTOM_A'}
    assert again.all_owned() == {'CUSTOM_A'}


def test_when_nova_compute_owns_image_types_they_are_never_touched():
    ownership = merge.Ownership(desired=frozenset({'CUSTOM_TROVE'}),
                                owned_custom=frozenset({'CUSTOM_TROVE'}),
                                image_types=False)
    current = {VMDK, 'HW_CPU_X86_AVX2'}
    assert ownership.target(current) == {VMDK, 'HW_CPU_X86_AVX2',
                                         'CUSTOM_TROVE'}
    assert ownership.in_sync_filter() == ['CUSTOM_TROVE']


def test_a_standard_trait_is_never_owned_whatever_ownership_is_told():
    """What nova-compute sets (COMPUTE_STATUS_DISABLED keeps a disabled host
    out of scheduling) is never the reporter's, even if handed over as a
    custom trait it set before."""
    standard = {'COMPUTE_NODE', 'HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED'}
    ownership = merge.Ownership(desired=frozenset({RAW}),
                                owned_custom=frozenset(standard
                                                       | {'CUSTOM_OLD'}))
    current = standard | {RAW, 'CUSTOM_OLD'}
    assert ownership.target(current) == standard | {RAW}
    assert not any(ownership.owns(t) for t in standard)
    assert not any(t.lstrip('!') in standard
                   for t in ownership.in_sync_filter())


def test_desired_traits_outside_the_owned_namespace_are_refused():
    """The owner rule is decided once, by the plan: handing the merge a
    trait it does not own is a bug to surface, never a trait to write."""
    for desired, image_types_owned in (({'HW_CPU_X86_AVX2'}, True),
                                       ({RAW}, False)):
        with pytest.raises(ValueError, match='outside the owned namespace'):
            merge.Ownership(desired=frozenset(desired),
                            image_types=image_types_owned)
