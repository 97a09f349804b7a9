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

"""Image-metadata traits a driver boots and nova-compute never writes.

The expected values are copied by hand from Nova 34.0.0's code (the line
is named beside each), and turned into trait names by the image-metadata
prefilter's own rule (``nova/scheduler/request_filter.py``
``transform_image_metadata``: prefix + value upper-cased, ``-`` -> ``_``),
not derived from the table under test. tests/nova checks the same table
against the installed Nova's modules.
"""

import json

import os_traits
import pytest

from virt_capabilities import drivers
from virt_capabilities import metadata_traits
from virt_capabilities import ownership
from virt_capabilities import ownership_state
from virt_capabilities import plan
from virt_capabilities import reporter as reporter_mod
from virt_capabilities.cmd import show

#: nova/virt/vmwareapi/images.py:164-168 (hw_disk_bus ide / scsi).
VMWARE_DISK_BUSES = ('ide', 'scsi')
#: nova/virt/vmwareapi/vm_util.py:391-406 convert_vif_model.
VMWARE_VIF_MODELS = ('e1000', 'e1000e', 'pcnet', 'sriov', 'vmxnet',
                     'vmxnet3')
#: vSphere's VirtualMachineVideoCard (vm_util.py:292-300) is VMware SVGA,
#: nova/objects/fields.py:619 VideoModel.VMVGA.
VMWARE_VIDEO_MODELS = ('vmvga',)
#: nova/virt/arch.py:18 ARMV7; os-traits spells the trait HW_ARCH_ARMV7.
ARMV7L = 'armv7l'


def prefilter_trait(prefix, value):
    return '%s_%s' % (prefix, value.replace('-', '_').upper())


VMWARE = {
    *(prefilter_trait('COMPUTE_STORAGE_BUS', v) for v in VMWARE_DISK_BUSES),
    *(prefilter_trait('COMPUTE_NET_VIF_MODEL', v) for v in VMWARE_VIF_MODELS),
    *(prefilter_trait('COMPUTE_GRAPHICS_MODEL', v)
      for v in VMWARE_VIDEO_MODELS),
}
#: What nova-compute itself writes and the reporter must never own:
#: resource_tracker.py:1282-1285, vmwareapi/driver.py:537, and a sample of
#: capability traits (nova/virt/driver.py:219-259).
NOVA_COMPUTE_WRITES = {'COMPUTE_NODE', 'OWNER_NOVA', 'COMPUTE_STATUS_DISABLED',
                       'HW_ARCH_X86_64', 'COMPUTE_NET_ATTACH_INTERFACE',
                       'COMPUTE_SAME_HOST_COLD_MIGRATE',
                       'COMPUTE_STORAGE_VIRTIO_FS'}


def traits_of(driver, machine='x86_64'):
    return {r.trait for r in drivers.DRIVERS[driver].metadata_rows(machine)}


def possible(driver):
    return drivers.DRIVERS[driver].possible_metadata_traits


def test_vmware_reports_what_its_spawn_path_boots():
    assert traits_of('vmwareapi.VMwareVCDriver') == VMWARE == {
        'COMPUTE_STORAGE_BUS_IDE', 'COMPUTE_STORAGE_BUS_SCSI',
        'COMPUTE_NET_VIF_MODEL_E1000', 'COMPUTE_NET_VIF_MODEL_E1000E',
        'COMPUTE_NET_VIF_MODEL_PCNET', 'COMPUTE_NET_VIF_MODEL_SRIOV',
        'COMPUTE_NET_VIF_MODEL_VMXNET', 'COMPUTE_NET_VIF_MODEL_VMXNET3',
        'COMPUTE_GRAPHICS_MODEL_VMVGA'}
    # Whatever host the reporter runs on: vCenter is elsewhere.
    assert traits_of('vmwareapi.VMwareVCDriver', ARMV7L) == VMWARE


@pytest.mark.parametrize('machine,expected', [
    (ARMV7L, {'HW_ARCH_ARMV7'}),
    ('ARMV7L', {'HW_ARCH_ARMV7'}),
    # nova-compute reports these itself (its name is valid): none of ours.
    ('x86_64', set()), ('aarch64', set()), ('ppc64le', set()),
    ('s390x', set()), ('i686', set()), ('armv6l', set()), ('', set()),
    (None, set()),
])
def test_libvirt_only_armv7l_whose_name_nova_gets_wrong(machine, expected):
    assert traits_of('libvirt.LibvirtDriver', machine) == expected


@pytest.mark.parametrize('driver', ['ironic.IronicDriver', 'zvm.ZVMDriver',
                                    'fake.FakeDriver'])
def test_other_drivers_get_none(driver):
    assert traits_of(driver, ARMV7L) == set()
    assert possible(driver) == frozenset()


def test_every_trait_is_a_real_os_traits_name_and_not_nova_computes():
    known = set(os_traits.get_traits())
    assert metadata_traits.ALL_TRAITS == VMWARE | {'HW_ARCH_ARMV7'}
    assert metadata_traits.ALL_TRAITS <= known
    assert not metadata_traits.ALL_TRAITS & NOVA_COMPUTE_WRITES
    assert not any(t.startswith('COMPUTE_IMAGE_TYPE_')
                   for t in metadata_traits.ALL_TRAITS)


def test_every_row_names_its_family_and_nova_source():
    families = {'COMPUTE_STORAGE_BUS_': 'storage_bus',
                'COMPUTE_NET_VIF_MODEL_': 'vif_model',
                'COMPUTE_GRAPHICS_MODEL_': 'graphics_model',
                'HW_ARCH_': 'architecture'}
    rows = metadata_traits.VMWARE_ROWS + tuple(
        r for rows in metadata_traits.LIBVIRT_ROWS_BY_MACHINE.values()
        for r in rows)
    for row in rows:
        [family] = [f for p, f in families.items()
                    if row.trait.startswith(p)]
        assert row.family == family
        assert row.source.startswith('virt/') and ':' in row.source


def test_ownable_is_the_drivers_table_never_a_prefix():
    assert possible('libvirt.LibvirtDriver') == {'HW_ARCH_ARMV7'}
    assert possible('vmwareapi.VMwareVCDriver') == VMWARE


# -- the plan: option, host architecture, show --------------------------

def plan_for(tmp_path, driver, text=''):
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = %s\nhost = h\n%s'
                    % (driver, text))
    return plan.NodePlan.from_files([str(path)], ['h'])


def test_on_by_default_and_in_the_plan_whoever_owns_image_types(tmp_path):
    for owner in ('reporter', 'nova-compute'):
        result = plan_for(tmp_path, 'vmwareapi.VMwareVCDriver',
                          '[virt_capabilities]\nimage_type_traits_owner = '
                          '%s\n' % owner)
        assert result.metadata_traits == VMWARE
        assert VMWARE <= result.traits
    assert result.traits == VMWARE  # nova-compute owns the image types


def test_switched_off_nothing_is_reported_but_the_table_stays_ownable(
        tmp_path):
    result = plan_for(tmp_path, 'vmwareapi.VMwareVCDriver',
                      '[virt_capabilities]\nimage_metadata_traits = False\n')
    assert result.metadata_traits == frozenset()
    assert not result.traits & VMWARE
    assert result.rule.metadata_ownable == VMWARE
    assert show.columns(result)['image_metadata_traits'] == {}


def test_host_architecture_read_from_the_machine(tmp_path, monkeypatch):
    import os
    real = os.uname()
    fake = type(real)((real.sysname, real.nodename, real.release,
                       real.version, ARMV7L))
    monkeypatch.setattr(os, 'uname', lambda: fake)
    result = plan_for(tmp_path, 'libvirt.LibvirtDriver')
    assert result.settings.host_architecture is None  # not set
    assert result.host_architecture == ARMV7L
    assert result.metadata_traits == {'HW_ARCH_ARMV7'}


def test_the_machine_is_asked_only_for_libvirt(tmp_path, monkeypatch):
    """Other drivers' traits do not depend on it (and Nova's harness
    forbids asking)."""
    import os

    def forbidden():
        raise AssertionError('os.uname called')
    monkeypatch.setattr(os, 'uname', forbidden)
    for driver in ('vmwareapi.VMwareVCDriver', 'fake.FakeDriver'):
        result = plan_for(tmp_path, driver)
        assert result.host_architecture is None
        show.columns(result)


@pytest.mark.parametrize('value,expected', [
    (ARMV7L, {'HW_ARCH_ARMV7'}), ('ArmV7l', {'HW_ARCH_ARMV7'}),
    ('x86_64', set()), ('aarch64', set())])
def test_host_architecture_option_overrides_the_machine(tmp_path, value,
                                                       expected):
    result = plan_for(tmp_path, 'libvirt.LibvirtDriver',
                      '[virt_capabilities]\nhost_architecture = %s\n' % value)
    assert result.metadata_traits == expected
    assert result.rule.metadata_ownable == {'HW_ARCH_ARMV7'}


def test_show_lists_them_with_their_family(tmp_path):
    shown = show.columns(plan_for(
        tmp_path, 'libvirt.LibvirtDriver',
        '[virt_capabilities]\nhost_architecture = armv7l\n'))
    assert shown['image_metadata_traits'] == {
        'architecture': ['HW_ARCH_ARMV7']}
    assert 'HW_ARCH_ARMV7' in shown['reporter_keeps']
    assert 'image_metadata_traits' in shown  # a column of its own


# -- ownership: exactly these, never the prefix, never nova-compute's -------

LIBVIRT_ARM_CURRENT = {
    # What nova-compute's libvirt driver keeps on an armv7l host: storage
    # buses, VIF and graphics models (set and unset by static_traits).
    'COMPUTE_STORAGE_BUS_VIRTIO', 'COMPUTE_STORAGE_BUS_SCSI',
    'COMPUTE_NET_VIF_MODEL_VIRTIO', 'COMPUTE_GRAPHICS_MODEL_VGA',
    'COMPUTE_NODE', 'COMPUTE_STATUS_DISABLED'}


def test_a_libvirt_node_never_touches_a_storage_bus():
    view = ownership.OwnerRule(
        metadata={'HW_ARCH_ARMV7'},
        metadata_ownable=possible('libvirt.LibvirtDriver')).on_provider(
        record=LIBVIRT_ARM_CURRENT)
    assert view.target(LIBVIRT_ARM_CURRENT) == LIBVIRT_ARM_CURRENT | {
        'HW_ARCH_ARMV7'}
    assert view.in_sync_filter() == ['HW_ARCH_ARMV7']


def test_only_table_traits_are_ever_owned():
    view = ownership.OwnerRule(
        metadata_ownable=NOVA_COMPUTE_WRITES | {'HW_ARCH_ARMV7'}
    ).on_provider(record=NOVA_COMPUTE_WRITES | {'HW_ARCH_ARMV7'})
    assert view.owned == {'HW_ARCH_ARMV7'}
    assert view.target(NOVA_COMPUTE_WRITES | {'HW_ARCH_ARMV7'}) == \
        NOVA_COMPUTE_WRITES
    assert view.in_sync_filter() == ['!HW_ARCH_ARMV7']
    with pytest.raises(ValueError, match='outside the owned namespace'):
        ownership.Ownership(desired=frozenset({'COMPUTE_STORAGE_BUS_IDE'}))


# -- the state: remembered, and only this driver's --------------------------

U1 = '6a3e5a2e-1b2c-4d5e-8f90-0a1b2c3d4e5f'


def test_only_this_drivers_metadata_traits_are_its_own(tmp_path):
    path = tmp_path / 'state.json'
    path.write_text(json.dumps({'format': ownership_state.FORMAT,
                                'providers': {U1: {
                                    ownership_state.DEFAULT_NAME: [
                                        'HW_ARCH_ARMV7',
                                        'COMPUTE_STORAGE_BUS_IDE',
                                        'COMPUTE_NODE', 'CUSTOM_A']}}}))
    state = ownership_state.OwnershipState(str(path))
    rule = ownership.OwnerRule(
        metadata_ownable=possible('libvirt.LibvirtDriver'))
    # Another driver's image-metadata trait, and nova-compute's: left alone.
    assert rule.remembered(state.owned(U1)) == {'HW_ARCH_ARMV7', 'CUSTOM_A'}
    # A driver with no image-metadata trait: custom traits only.
    assert ownership.OwnerRule().remembered(state.owned(U1)) == {'CUSTOM_A'}


def test_a_recorded_standard_trait_is_never_remembered(tmp_path):
    path = str(tmp_path / 'state.json')
    state = ownership_state.OwnershipState(path)
    state.record(U1, {'HW_ARCH_ARMV7', 'COMPUTE_NODE', 'CUSTOM_A'})
    again = ownership_state.OwnershipState(path)
    rule = ownership.OwnerRule(
        metadata_ownable=possible('libvirt.LibvirtDriver'))
    assert rule.remembered(again.owned(U1)) == {'HW_ARCH_ARMV7', 'CUSTOM_A'}


class FakeClient:
    """Just what Reporter.sync_provider uses, one provider in memory."""

    def __init__(self, traits):
        self.traits, self.generation = set(traits), 1

    def get_provider_traits(self, uuid):
        return set(self.traits), self.generation

    def put_provider_traits(self, uuid, traits, generation):
        assert generation == self.generation
        self.traits, self.generation = set(traits), generation + 1


def reporter_for(client, state, on):
    wanted = frozenset(VMWARE if on else ())
    return reporter_mod.Reporter(client, ownership.OwnerRule(
        metadata=wanted, metadata_ownable=frozenset(VMWARE)), state=state)


def test_switched_off_removes_only_what_it_set(tmp_path):
    path = str(tmp_path / 'state.json')
    # Somebody else (an operator) set VMVGA before the reporter ever ran.
    before = {'COMPUTE_NODE', 'HW_ARCH_X86_64', 'COMPUTE_GRAPHICS_MODEL_VMVGA'}
    client = FakeClient(before)
    state = ownership_state.OwnershipState(path)
    reporter_for(client, state, on=True).sync_provider(U1)
    assert client.traits == before | VMWARE
    # A second cycle, and a restart: what it set is still known as its own.
    reporter_for(client, state, on=True).sync_provider(U1)
    state = ownership_state.OwnershipState(path)
    reporter_for(client, state, on=True).sync_provider(U1)
    assert ownership_state.OwnershipState(path).owned(
        U1) == VMWARE - {'COMPUTE_GRAPHICS_MODEL_VMVGA'}
    # Off, with the state read back from disk: every one it set goes, the
    # operator's stays.
    state = ownership_state.OwnershipState(path)
    result = reporter_for(client, state, on=False).sync_provider(U1)
    assert client.traits == before
    assert set(result.removed) == VMWARE - before
    assert ownership_state.OwnershipState(path).owned(
        U1) == frozenset()


def test_switched_off_without_state_removes_nothing(tmp_path):
    client = FakeClient({'COMPUTE_NODE'} | VMWARE)
    state = ownership_state.OwnershipState(None)
    result = reporter_for(client, state, on=False).sync_provider(U1)
    assert client.traits == {'COMPUTE_NODE'} | VMWARE
    assert not result.changed


def test_every_row_is_a_trait_of_its_family_in_the_shared_catalogue():
    """What the reporter reports is what the request filter asks for."""
    from image_type_common import image_metadata
    rows = metadata_traits.VMWARE_ROWS + tuple(
        r for rows in metadata_traits.LIBVIRT_ROWS_BY_MACHINE.values()
        for r in rows)
    for row in rows:
        family = image_metadata.FAMILIES[row.family]
        assert any(row.trait in family.serving_traits(value)
                   for value in family.values)
