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

"""The ownership rules (``ownership.RULES``), each held by a test named
``test_rule_<name>``; then the pure merge: only what it owns ever
changes."""

import json

import pytest

from image_type_common import exceptions
from image_type_common import image_types
from virt_capabilities import ownership
from virt_capabilities import ownership_state
from virt_capabilities import reporter as reporter_mod

RAW, QCOW2, VMDK = (image_types.TRAIT_BY_FORMAT[f]
                    for f in ('raw', 'qcow2', 'vmdk'))
VMVGA = 'COMPUTE_GRAPHICS_MODEL_VMVGA'
IDE = 'COMPUTE_STORAGE_BUS_IDE'
NOVA_COMPUTE_S = {'COMPUTE_NODE', 'HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED'}


def test_rule_image_types_by_option():
    view = ownership.OwnerRule(image_types={RAW, QCOW2},
                                owns_image_types=True).on_provider()
    current = {VMDK, RAW, 'HW_CPU_X86_AVX2', 'CUSTOM_FOO',
               'COMPUTE_STATUS_DISABLED'}
    assert view.target(current) == {
        RAW, QCOW2, 'HW_CPU_X86_AVX2', 'CUSTOM_FOO', 'COMPUTE_STATUS_DISABLED'}


def test_rule_kept_or_remembered():
    rule = ownership.OwnerRule(image_types={RAW}, owns_image_types=True,
                           custom={'CUSTOM_TROVE'})
    view = rule.on_provider(record={'CUSTOM_TROVE', 'CUSTOM_OLD'})
    current = {'CUSTOM_OLD', 'CUSTOM_OTHERS', VMDK}
    assert view.target(current) == {RAW, 'CUSTOM_TROVE', 'CUSTOM_OTHERS'}


def test_in_sync_filter_requires_desired_and_forbids_the_rest():
    view = ownership.OwnerRule(image_types={RAW}, owns_image_types=True
                                ).on_provider(record={'CUSTOM_OLD'})
    tokens = view.in_sync_filter(absent={VMDK})
    assert tokens[0] == RAW
    assert '!CUSTOM_OLD' in tokens
    assert '!' + QCOW2 in tokens
    assert '!' + VMDK not in tokens and '!' + RAW not in tokens
    assert len(tokens) == len(image_types.TRAITS) - 1 + 1


def test_combined_owns_what_any_provider_owns():
    rule = ownership.OwnerRule(custom={'CUSTOM_A'})
    both = ownership.combined([rule.on_provider(record={'CUSTOM_OLD1'}),
                           rule.on_provider(record={'CUSTOM_OLD2'})])
    assert both.in_sync_filter() == ['CUSTOM_A', '!CUSTOM_OLD1',
                                     '!CUSTOM_OLD2']


def test_diff_is_sorted():
    assert ownership.diff({'B', 'C'}, {'A', 'B'}) == (['A'], ['C'])


def test_when_nova_compute_owns_image_types_they_are_never_touched():
    view = ownership.OwnerRule(custom={'CUSTOM_TROVE'}).on_provider()
    current = {VMDK, 'HW_CPU_X86_AVX2'}
    assert view.target(current) == {VMDK, 'HW_CPU_X86_AVX2',
                                         'CUSTOM_TROVE'}
    assert view.in_sync_filter() == ['CUSTOM_TROVE']


def test_rule_ownable_only():
    """What nova-compute sets (COMPUTE_STATUS_DISABLED keeps a disabled host
    out of scheduling) is never the reporter's, even if handed over as a
    trait it set before, to the rule or to an Ownership directly."""
    rule = ownership.OwnerRule(image_types={RAW}, owns_image_types=True)
    for view in (rule.on_provider(record=NOVA_COMPUTE_S |
                                       {'CUSTOM_OLD'}),
                      ownership.Ownership(desired=frozenset({RAW}),
                                      owned=frozenset(NOVA_COMPUTE_S |
                                                      {RAW, 'CUSTOM_OLD'}))):
        current = NOVA_COMPUTE_S | {RAW, 'CUSTOM_OLD'}
        assert view.target(current) == NOVA_COMPUTE_S | {RAW}
        assert not any(view.owns(t) for t in NOVA_COMPUTE_S)
        assert not any(t.lstrip('!') in NOVA_COMPUTE_S
                       for t in view.in_sync_filter())


def test_the_rule_refuses_what_it_cannot_own():
    """The owner rule is decided once, by the plan: a rule that keeps what
    it does not own is a bug to surface, never a trait to write."""
    with pytest.raises(ValueError, match='without owning them'):
        ownership.OwnerRule(image_types={RAW})
    with pytest.raises(ValueError, match='not custom'):
        ownership.OwnerRule(custom={'HW_CPU_X86_AVX2'})
    with pytest.raises(ValueError, match='not image-metadata'):
        ownership.OwnerRule(metadata={'HW_CPU_X86_AVX2'})
    with pytest.raises(ValueError, match='outside the owned namespace'):
        ownership.Ownership(desired=frozenset({'HW_CPU_X86_AVX2'}),
                        owned=frozenset({'HW_CPU_X86_AVX2'}))


def test_rule_others_records_protect():
    rule = ownership.OwnerRule(custom={'CUSTOM_MINE'})
    view = rule.on_provider(record={'CUSTOM_MINE', 'CUSTOM_SHARED'},
                                 others={'CUSTOM_SHARED'})
    assert not view.owns('CUSTOM_SHARED')
    assert view.owns('CUSTOM_MINE')


def test_only_the_drivers_metadata_traits_are_ever_remembered():
    rule = ownership.OwnerRule(metadata_ownable={VMVGA})
    assert rule.remembered({VMVGA, IDE, 'CUSTOM_A', 'COMPUTE_NODE'}) == {
        VMVGA, 'CUSTOM_A'}


def test_rule_recorded_only_if_set():
    rule = ownership.OwnerRule(custom={'CUSTOM_A'}, metadata={VMVGA, IDE},
                           metadata_ownable={VMVGA, IDE})
    # IDE was there before (somebody else's): never recorded as its own.
    assert rule.to_record(added=[VMVGA]) == {'CUSTOM_A', VMVGA}
    assert rule.to_record(record={VMVGA}) == {'CUSTOM_A', VMVGA}
    # One Placement does not know is not on the provider: not recorded.
    assert rule.to_record(record={VMVGA}, missing={VMVGA}) == {'CUSTOM_A'}


# -- the records, kept by the reporter and the state file -------------------

U1 = '6a3e5a2e-1b2c-4d5e-8f90-0a1b2c3d4e5f'


class Store:
    """A trait store (``virt_capabilities.reporter``) whose writes fail
    as told: ``answered`` after applying the first trait, or with no
    answer at all."""

    kind = 'provider'
    outcome_unknown = (exceptions.PlacementUnavailable,)

    def __init__(self, fail=None):
        self.traits = set()
        self.fail = fail
        self.writes = 0

    def read(self, uuid):
        return set(self.traits), None

    def write(self, uuid, traits, generation):
        self.writes += 1
        if self.fail == 'answered':
            self.traits.add(sorted(set(traits) - self.traits)[0])
            raise exceptions.PlacementError('refused half-way')
        if self.fail == 'no answer':
            raise exceptions.PlacementUnavailable('no answer')
        self.traits = set(traits)


def sync(store, state, custom):
    return reporter_mod.Reporter(object(), ownership.OwnerRule(
        custom=frozenset(custom)), state, store=store).sync([U1])


def test_rule_recorded_before_written(tmp_path):
    path = str(tmp_path / 'state.json')
    store = Store()
    seen = []
    write = store.write

    def recorded_first(uuid, traits, generation):
        seen.append(ownership_state.OwnershipState(path).owned(U1))
        write(uuid, traits, generation)
    store.write = recorded_first
    sync(store, ownership_state.OwnershipState(path), {'CUSTOM_A'})
    assert seen == [{'CUSTOM_A'}]


@pytest.mark.parametrize('fail,kept', [
    ('answered', {'CUSTOM_A'}), ('no answer', {'CUSTOM_A', 'CUSTOM_B'})])
def test_rule_failure_keeps_what_is_carried(tmp_path, fail, kept):
    path = str(tmp_path / 'state.json')
    reporter = reporter_mod.Reporter(object(), ownership.OwnerRule(
        custom={'CUSTOM_A', 'CUSTOM_B'}), ownership_state.OwnershipState(
        path), store=Store(fail))
    with pytest.raises(exceptions.Error):
        reporter.sync_provider(U1)
    assert ownership_state.OwnershipState(path).owned(U1) == kept


def test_rule_own_records_only(tmp_path):
    path = str(tmp_path / 'state.json')
    ownership_state.OwnershipState(path, name='b').record(
        U1, {'CUSTOM_B', 'HW_CPU_X86_AVX2'})
    a = ownership_state.OwnershipState(path, name='a')
    a.record(U1, {'CUSTOM_A'})
    a.record(U1, set())
    with open(path) as f:
        assert json.load(f)['providers'] == {
            U1: {'b': ['CUSTOM_B', 'HW_CPU_X86_AVX2']}}


def test_rule_foreign_file_refused(tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\nhost = h\n')
    with pytest.raises(exceptions.ConfigError):
        ownership_state.OwnershipState(str(path))
    assert path.read_text() == '[DEFAULT]\nhost = h\n'


def test_rule_unsaved_stops_sync():
    store = Store()
    report = sync(store, ownership_state.OwnershipState(
        '/proc/nonexist/state.json'), {'CUSTOM_A'})
    assert isinstance(report.state_error, ownership_state.StateNotSaved)
    assert store.writes == 0 and store.traits == set()


def test_rule_reload_keeps_records(tmp_path):
    first = ownership_state.OwnershipState(None)
    first.record(U1, {'CUSTOM_A'})
    reloaded = ownership_state.OwnershipState(None)
    reloaded.adopt(first)
    assert reloaded.owned(U1) == {'CUSTOM_A'}
    path = str(tmp_path / 'state.json')
    other = ownership_state.OwnershipState(path, name='other')
    other.record(U1, {'CUSTOM_B'})
    mine = ownership_state.OwnershipState(path, name='mine')
    mine.adopt(other)
    assert mine.owned(U1) == frozenset()


def test_rule_remove_takes_its_own(tmp_path):
    rule = ownership.OwnerRule(image_types={RAW}, owns_image_types=True,
                               custom={'CUSTOM_A'})
    removal = rule.removal(record={'CUSTOM_A', 'CUSTOM_OLD'},
                           others={'CUSTOM_OLD'})
    current = {RAW, VMDK, 'CUSTOM_A', 'CUSTOM_OLD', 'COMPUTE_NODE'}
    # VMDK: not one it keeps (nova-compute's, if anybody's); CUSTOM_OLD:
    # another reporter's record holds it.
    assert removal.target(current) == {VMDK, 'CUSTOM_OLD', 'COMPUTE_NODE'}
    custom = ownership.OwnerRule(custom={'CUSTOM_A'})
    assert custom.removal(record={'CUSTOM_A'}).target(current) == (
        current - {'CUSTOM_A'})
    for state_file, document in ((None, None),
                                 (str(tmp_path / 'gone.json'), None)):
        with pytest.raises(exceptions.ConfigError):
            ownership.check_removable(custom, state_file, document)
    ownership.check_removable(ownership.OwnerRule(), str(
        tmp_path / 'gone.json'), None)  # it never set anything


def test_rule_remove_twice_writes_nothing(tmp_path):
    path = tmp_path / 'state.json'
    state = ownership_state.OwnershipState(str(path))
    state.record(U1, {'CUSTOM_A'})
    state.record_each({U1: frozenset()}, by_remove=True)
    assert json.loads(path.read_text()) == {
        'format': ownership_state.FORMAT, 'providers': {},
        ownership_state.EMPTIED_KEY: True}
    before = path.stat().st_mtime_ns
    again = ownership_state.OwnershipState(str(path))
    assert again.providers == []
    again.record_each({U1: frozenset()}, by_remove=True)
    assert path.stat().st_mtime_ns == before


def test_every_rule_has_a_test_named_after_it():
    tests = {name for name in globals() if name.startswith('test_rule_')}
    assert tests == {'test_rule_' + rule.replace('-', '_')
                     for rule in ownership.RULES}
