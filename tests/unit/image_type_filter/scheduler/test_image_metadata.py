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

"""The image-metadata request filter: each property on its own.

Expected trait names are written out literally from os-traits 3.9.0 (and
the libvirt driver's spelling), never computed by the code under test.
"""

import logging

from oslo_config import cfg
import pytest

from image_type_common import exceptions as common_exceptions
from image_type_common import image_metadata
from image_type_filter import conf as itf_conf
from image_type_filter import exceptions
from image_type_filter import settings as settings_mod
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import image_metadata_prefilter as prefilter
from image_type_filter.scheduler import pipeline as filter_pipeline
from image_type_filter.scheduler import trait_catalog
from tests import scheduler_conf

ALL = list(image_metadata.NAMES)

#: (property, value as Glance may hold it) -> the one trait required.
REQUIRED = [
    ('hw_disk_bus', 'scsi', 'COMPUTE_STORAGE_BUS_SCSI'),
    ('hw_disk_bus', 'virtio', 'COMPUTE_STORAGE_BUS_VIRTIO'),
    ('hw_cdrom_bus', 'ide', 'COMPUTE_STORAGE_BUS_IDE'),
    ('hw_cdrom_bus', 'sata', 'COMPUTE_STORAGE_BUS_SATA'),
    ('hw_vif_model', 'vmxnet3', 'COMPUTE_NET_VIF_MODEL_VMXNET3'),
    ('hw_vif_model', 'spapr-vlan', 'COMPUTE_NET_VIF_MODEL_SPAPR_VLAN'),
    ('hw_vif_model', 'VirtualE1000', 'COMPUTE_NET_VIF_MODEL_E1000'),
    ('hw_video_model', 'qxl', 'COMPUTE_GRAPHICS_MODEL_QXL'),
    ('hw_video_model', 'none', 'COMPUTE_GRAPHICS_MODEL_NONE'),
    ('hw_emulation_architecture', 'aarch64', 'COMPUTE_ARCH_AARCH64'),
    ('hw_emulation_architecture', 's390x', 'COMPUTE_ARCH_S390X'),
    # Nova asks for COMPUTE_VIOMMU_INTEL; the libvirt driver reports this.
    ('hw_viommu_model', 'intel', 'COMPUTE_VIOMMU_MODEL_INTEL'),
    ('hw_viommu_model', 'auto', 'COMPUTE_VIOMMU_MODEL_AUTO'),
]

#: os-traits 3.9.0's HW_ARCH_* traits other than I686 and X86_64.
NOT_X86 = {
    'HW_ARCH_AARCH64', 'HW_ARCH_ALPHA', 'HW_ARCH_ARMV6', 'HW_ARCH_ARMV7',
    'HW_ARCH_ARMV7B', 'HW_ARCH_CRIS', 'HW_ARCH_IA64', 'HW_ARCH_LM32',
    'HW_ARCH_M68K', 'HW_ARCH_MICROBLAZE', 'HW_ARCH_MICROBLAZEEL',
    'HW_ARCH_MIPS', 'HW_ARCH_MIPS64', 'HW_ARCH_MIPS64EL', 'HW_ARCH_MIPSEL',
    'HW_ARCH_OPENRISC', 'HW_ARCH_PARISC', 'HW_ARCH_PARISC64', 'HW_ARCH_PPC',
    'HW_ARCH_PPC64', 'HW_ARCH_PPC64LE', 'HW_ARCH_PPCEMB', 'HW_ARCH_PPCLE',
    'HW_ARCH_S390', 'HW_ARCH_S390X', 'HW_ARCH_SH4', 'HW_ARCH_SH4EB',
    'HW_ARCH_SPARC', 'HW_ARCH_SPARC64', 'HW_ARCH_UNICORE32',
    'HW_ARCH_XTENSA', 'HW_ARCH_XTENSAEB'}


class FakePlacement:
    """The three trait reads the filter's catalogue makes."""

    def __init__(self, known=None, carried=None):
        import os_traits
        self.known = set(os_traits.get_traits()) if known is None else known
        self.carried = set(self.known) if carried is None else carried
        self.asked = []

    def list_traits(self, names):
        self.asked.append(('known', frozenset(names)))
        return set(names) & self.known

    def list_associated_traits(self):
        self.asked.append(('carried',))
        return set(self.carried)


def make(families=ALL, placement=None):
    conf = scheduler_conf.new_conf(image_metadata_prefilter__families=families)
    filter_settings = settings_mod.FilterSettings.from_conf(conf)
    return prefilter.ImageMetadataPrefilter(
        filter_settings,
        trait_catalog.for_placement(placement, filter_settings), placement)


def spec(properties, **kwargs):
    return our_filters.RequestSpec.for_boot('qcow2', {'VCPU': 1},
                                            properties=properties, **kwargs)


@pytest.mark.parametrize('prop,value,trait', REQUIRED)
def test_each_property_requires_its_os_traits_trait(prop, value, trait):
    request = spec({prop: value})
    assert make()(None, request) is True
    assert request.root_required == {trait}
    assert request.root_forbidden == set()


def test_off_by_default():
    conf = scheduler_conf.new_conf()
    f = prefilter.ImageMetadataPrefilter(
        settings_mod.FilterSettings.from_conf(conf))
    request = spec({'hw_disk_bus': 'scsi', 'hw_architecture': 'aarch64'})
    assert f(None, request) is False
    assert request.root_required == set()


def test_only_the_enabled_families_constrain():
    request = spec({'hw_disk_bus': 'scsi', 'hw_vif_model': 'e1000',
                    'hw_architecture': 'aarch64'})
    make(['vif_model'])(None, request)
    assert request.root_required == {'COMPUTE_NET_VIF_MODEL_E1000'}


def test_disk_and_cdrom_bus_are_two_constraints():
    request = spec({'hw_disk_bus': 'virtio', 'hw_cdrom_bus': 'sata'})
    make(['storage_bus'])(None, request)
    assert request.root_required == {'COMPUTE_STORAGE_BUS_VIRTIO',
                                     'COMPUTE_STORAGE_BUS_SATA'}


def test_a_value_without_a_trait_leaves_the_others_and_warns_once(caplog):
    """Nova adds none of the image's traits here; we keep the others."""
    f = make()
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            request = spec({'hw_emulation_architecture': 'i686',
                            'hw_disk_bus': 'scsi',
                            'hw_vif_model': 'virtio'})
            f(None, request)
            assert request.root_required == {
                'COMPUTE_STORAGE_BUS_SCSI', 'COMPUTE_NET_VIF_MODEL_VIRTIO'}
    warnings = [r.getMessage() for r in caplog.records
                if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert 'hw_emulation_architecture=i686' in warnings[0]


#: os-traits 3.9.0's whole HW_ARCH_* family.
EVERY_ARCH = NOT_X86 | {'HW_ARCH_I686', 'HW_ARCH_X86_64'}


@pytest.mark.parametrize('value', ['i686', 'i386', 'x86_32', 'I586'])
def test_an_i686_image_may_land_on_x86_64_hosts(value):
    request = spec({'hw_architecture': value})
    assert make(['architecture'])(None, request) is True
    assert request.root_required == set()
    assert request.root_forbidden == NOT_X86


@pytest.mark.parametrize('prop,value,hosts', [
    ('hw_architecture', 'x86_64', {'HW_ARCH_X86_64'}),
    ('hw_architecture', 'amd64', {'HW_ARCH_X86_64'}),
    ('hw_architecture', 'aarch64', {'HW_ARCH_AARCH64'}),
    # Nova asks for HW_ARCH_ARMV7L, which os-traits does not have.
    ('hw_architecture', 'armv7l', {'HW_ARCH_ARMV7'}),
    ('architecture', 'ppc64le', {'HW_ARCH_PPC64LE'}),
])
def test_every_architecture_forbids_the_other_host_cpus(prop, value, hosts):
    request = spec({prop: value})
    assert make(['architecture'])(None, request) is True
    assert request.root_required == set()
    assert request.root_forbidden == EVERY_ARCH - hosts


def passes(request, host_traits):
    """Would Placement offer a host with these traits to the request?"""
    return (request.root_required <= host_traits
            and not request.root_forbidden & host_traits)


def test_i686_and_aarch64_treat_a_host_without_an_arch_trait_alike():
    """ironic and z/VM report no HW_ARCH_* trait (Nova's ImageProperties
    Filter checks their architecture): neither image is kept from them by
    Placement, and each still avoids the other's hosts."""
    ironic = {'COMPUTE_NODE', 'COMPUTE_IMAGE_TYPE_RAW'}
    x86 = ironic | {'HW_ARCH_X86_64'}
    arm = ironic | {'HW_ARCH_AARCH64'}
    i686 = spec({'hw_architecture': 'i686'})
    aarch64 = spec({'hw_architecture': 'aarch64'})
    for request in (i686, aarch64):
        make(['architecture'])(None, request)
    assert [passes(i686, h) for h in (ironic, x86, arm)] == [
        True, True, False]
    assert [passes(aarch64, h) for h in (ironic, x86, arm)] == [
        True, False, True]


def test_the_legacy_architecture_property_is_read_when_alone():
    both = spec({'hw_architecture': 'aarch64', 'architecture': 'x86_64'})
    make(['architecture'])(None, both)
    assert both.root_forbidden == EVERY_ARCH - {'HW_ARCH_AARCH64'}


def test_a_volume_backed_request_uses_the_volumes_image_metadata():
    request = spec({'hw_disk_bus': 'scsi'}, is_bfv=True)
    assert make()(None, request) is True
    assert request.root_required == {'COMPUTE_STORAGE_BUS_SCSI'}


@pytest.mark.parametrize('value', [
    'scsi&required=CUSTOM_X', '../../traits', 'SCSI ,VIRTIO', '', 'x' * 4000,
    42, None, ['scsi'], {'a': 1}, 'scs\u0131', 'virtio\n'])
def test_hostile_values_add_nothing_and_never_raise(value):
    request = spec({'hw_disk_bus': value, 'hw_vif_model': 'e1000'})
    make()(None, request)
    assert request.root_required <= {'COMPUTE_NET_VIF_MODEL_E1000',
                                     'COMPUTE_STORAGE_BUS_VIRTIO'}
    assert 'COMPUTE_NET_VIF_MODEL_E1000' in request.root_required


def test_no_image_or_no_properties_adds_nothing():
    assert make()(None, our_filters.RequestSpec(
        resources={'VCPU': 1})) is False
    assert make()(None, spec(None)) is False


def test_a_trait_placement_does_not_know_is_never_asked_for(caplog):
    placement = FakePlacement(known={'COMPUTE_STORAGE_BUS_SCSI'})
    request = spec({'hw_disk_bus': 'scsi', 'hw_viommu_model': 'smmuv3'})
    with caplog.at_level(logging.WARNING):
        make(placement=placement)(None, request)
    assert request.root_required == {'COMPUTE_STORAGE_BUS_SCSI'}
    assert any('hw_viommu_model=smmuv3' in r.getMessage()
               and 'COMPUTE_VIOMMU_MODEL_SMMUV3' in r.getMessage()
               for r in caplog.records)


def test_forbidden_traits_are_only_those_placement_knows():
    placement = FakePlacement(known={'HW_ARCH_AARCH64', 'HW_ARCH_X86_64',
                                     'HW_ARCH_S390X'})
    request = spec({'hw_architecture': 'i686'})
    make(placement=placement)(None, request)
    assert request.root_forbidden == {'HW_ARCH_AARCH64', 'HW_ARCH_S390X'}


def test_a_trait_no_host_carries_is_a_fault_naming_property_and_family():
    placement = FakePlacement(carried={'COMPUTE_STORAGE_BUS_SCSI'})
    with pytest.raises(exceptions.NoValidHost) as err:
        make(placement=placement)(None, spec({'hw_vif_model': 'vmxnet3'}))
    assert str(err.value) == (
        'No compute host reports COMPUTE_NET_VIF_MODEL_VMXNET3, which the '
        'image needs for hw_vif_model=vmxnet3, image_metadata_prefilter '
        'family vif_model.')


def test_placement_is_asked_once_not_per_boot():
    placement = FakePlacement()
    f = make(placement=placement)
    for _ in range(5):
        f(None, spec({'hw_disk_bus': 'scsi', 'hw_architecture': 'i686'}))
    assert [a[0] for a in placement.asked].count('carried') == 1
    assert [a[0] for a in placement.asked].count('known') == 2


def test_an_i686_image_on_x86_64_hosts_reads_the_traits_once():
    """x86_64 hosts never carry HW_ARCH_I686: once HW_ARCH_X86_64 has
    been seen carried, an i686 boot asks Placement nothing more."""
    placement = FakePlacement(carried={'HW_ARCH_X86_64'})
    f = make(['architecture'], placement=placement)
    for _ in range(5):
        f(None, spec({'hw_architecture': 'i686'}))
    assert [a[0] for a in placement.asked].count('carried') == 1


def test_describe_names_the_property_and_family():
    f = make()
    request = spec({'hw_vif_model': 'vmxnet3', 'hw_architecture': 'i686'})
    assert f.describe_trait('COMPUTE_NET_VIF_MODEL_VMXNET3', request) == (
        'for hw_vif_model=vmxnet3, image_metadata_prefilter family '
        'vif_model')
    assert f.describe_trait('HW_ARCH_S390X', request) == (
        'for hw_architecture=i686 (boots on HW_ARCH_I686 or HW_ARCH_X86_64 '
        'or a host with no HW_ARCH_* trait), image_metadata_prefilter '
        'family architecture')
    assert f.describe_trait('COMPUTE_IMAGE_TYPE_RAW', request) is None
    assert make(['vif_model']).describe_trait('HW_ARCH_S390X') is None


def test_an_unknown_family_is_a_one_line_config_error(tmp_path):
    nova_conf = tmp_path / 'nova.conf'
    nova_conf.write_text('[image_metadata_prefilter]\n'
                         'families = storage_bus, disk_bus\n')
    conf = cfg.ConfigOpts()
    itf_conf.register_opts(conf)
    conf(args=[], default_config_files=[str(nova_conf)])
    with pytest.raises(common_exceptions.ConfigError) as err:
        settings_mod.FilterSettings.from_conf(conf)
    message = str(err.value)
    assert message.startswith('[image_metadata_prefilter] families:')
    assert 'disk_bus' in message and '\n' not in message


def test_the_default_pipeline_runs_it_with_one_shared_catalogue():
    placement = FakePlacement()
    conf = scheduler_conf.new_conf(
        image_metadata_prefilter__families=['storage_bus'],
        scheduler__filter_hosts_by_image_type_support=True)
    pipeline = filter_pipeline.RequestFilterPipeline.from_settings(
        settings_mod.FilterSettings.from_conf(conf), placement=placement)
    request = spec({'hw_disk_bus': 'scsi'})
    added = pipeline(None, request)
    assert added == ['require_image_type_support',
                     'image_metadata_prefilter']
    assert request.root_required == {'COMPUTE_IMAGE_TYPE_QCOW2',
                                     'COMPUTE_STORAGE_BUS_SCSI'}
    catalogs = {id(f.catalog) for _, f in pipeline.filters}
    assert len(catalogs) == 1
    assert isinstance(pipeline.filters[0][1].catalog,
                      trait_catalog.TraitCatalog)
