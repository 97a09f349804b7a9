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

"""The image-metadata prefilter against a real Placement: which hosts a
boot is offered, status per family, and what --explain says.

The hosts carry traits as their drivers report them (the libvirt ones a
subset of what Nova 34's libvirt driver reports for KVM on that CPU; the
VMware one only HW_ARCH_X86_64, as Nova 34's VMware driver). Expected host
sets are written out, never computed by the code under test.
"""

import json
import subprocess
import sys

import pytest

from image_type_demo import fleet
from image_type_filter import exceptions
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import pipeline as filter_pipeline
from placement_runner import embedded
from tests.helpers import clean_env

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 5}
ALL = ('storage_bus', 'vif_model', 'graphics_model', 'architecture',
       'emulation_architecture', 'viommu_model')
IMAGE_TYPES = ('COMPUTE_IMAGE_TYPE_QCOW2', 'COMPUTE_IMAGE_TYPE_RAW',
               'COMPUTE_IMAGE_TYPE_VMDK')
LIBVIRT = ('COMPUTE_STORAGE_BUS_VIRTIO', 'COMPUTE_STORAGE_BUS_SCSI',
           'COMPUTE_STORAGE_BUS_IDE', 'COMPUTE_STORAGE_BUS_SATA',
           'COMPUTE_NET_VIF_MODEL_VIRTIO', 'COMPUTE_NET_VIF_MODEL_E1000',
           'COMPUTE_GRAPHICS_MODEL_VIRTIO', 'COMPUTE_GRAPHICS_MODEL_VGA',
           'COMPUTE_VIOMMU_MODEL_AUTO', 'COMPUTE_VIOMMU_MODEL_VIRTIO')
HOSTS = {
    'kvm-x86': (*LIBVIRT, 'HW_ARCH_X86_64', 'COMPUTE_ARCH_X86_64',
                'COMPUTE_VIOMMU_MODEL_INTEL'),
    'kvm-arm': (*LIBVIRT, 'HW_ARCH_AARCH64', 'COMPUTE_ARCH_AARCH64',
                'COMPUTE_ARCH_X86_64', 'COMPUTE_VIOMMU_MODEL_SMMUV3'),
    'vmware': ('HW_ARCH_X86_64',),
}

#: image properties -> hosts offered, with every family on.
EXPECTED = [
    ({}, ['kvm-arm', 'kvm-x86', 'vmware']),
    ({'hw_disk_bus': 'virtio'}, ['kvm-arm', 'kvm-x86']),
    ({'hw_architecture': 'x86_64'}, ['kvm-x86', 'vmware']),
    ({'hw_architecture': 'aarch64'}, ['kvm-arm']),
    # Nova's prefilter would offer only HW_ARCH_I686 hosts: none here.
    ({'hw_architecture': 'i686'}, ['kvm-x86', 'vmware']),
    ({'architecture': 'amd64'}, ['kvm-x86', 'vmware']),
    # Nova's would drop both constraints (COMPUTE_VIOMMU_INTEL is no trait).
    ({'hw_viommu_model': 'intel', 'hw_architecture': 'x86_64'}, ['kvm-x86']),
    ({'hw_viommu_model': 'smmuv3'}, ['kvm-arm']),
    # No os-traits trait for i686 emulation: that property adds nothing,
    # the bus still counts.
    ({'hw_emulation_architecture': 'i686', 'hw_cdrom_bus': 'sata'},
     ['kvm-arm', 'kvm-x86']),
    ({'hw_emulation_architecture': 'x86_64', 'hw_architecture': 'aarch64'},
     ['kvm-arm']),
    ({'hw_video_model': 'vga', 'hw_vif_model': 'e1000'},
     ['kvm-arm', 'kvm-x86']),
]


@pytest.fixture(scope='module')
def metadata_fleet():
    """A Placement of this module's own with the three hosts (whether a
    trait is carried at all is part of what is tested); read only."""
    with embedded.EmbeddedPlacement() as server:
        client = server.client()
        uuids = {}
        for name, traits in HOSTS.items():
            uuids[fleet.create_provider(
                client, name, fleet.DEFAULT_INVENTORY,
                traits=(fleet.NOVA_COMPUTE_NODE, *IMAGE_TYPES, *traits))] = \
                name
        yield server, uuids


def offered(metadata_fleet, properties, families=ALL, is_bfv=False):
    server, names = metadata_fleet
    client = server.client()
    filters = filter_pipeline.RequestFilterPipeline.from_settings(
        settings.FilterSettings.defaults(image_metadata_families=families),
        placement=client)
    found = our_filters.get_candidates(
        client, filters, our_filters.RequestSpec.for_boot(
            'qcow2', RESOURCES, properties=properties, is_bfv=is_bfv))
    return sorted(names[u] for u in found.provider_uuids)


@pytest.mark.parametrize('properties,hosts', EXPECTED)
def test_each_image_goes_where_its_properties_can_boot(metadata_fleet,
                                                       properties, hosts):
    assert offered(metadata_fleet, properties) == hosts


def test_a_family_not_enabled_does_not_constrain(metadata_fleet):
    assert offered(metadata_fleet, {'hw_architecture': 'aarch64'},
                   families=('storage_bus',)) == ['kvm-arm', 'kvm-x86',
                                                  'vmware']


def test_volume_backed_boots_use_the_volumes_image_metadata(metadata_fleet):
    assert offered(metadata_fleet, {'hw_architecture': 'aarch64'},
                   is_bfv=True) == ['kvm-arm']


def test_a_value_no_host_reports_fails_naming_it(metadata_fleet):
    with pytest.raises(exceptions.NoValidHost,
                       match='COMPUTE_NET_VIF_MODEL_VMXNET3.*'
                             'hw_vif_model=vmxnet3'):
        offered(metadata_fleet, {'hw_vif_model': 'vmxnet3'})


def test_an_architecture_no_host_boots_fails_naming_its_trait(
        metadata_fleet):
    """Every host reports an HW_ARCH_* trait and none HW_ARCH_S390X:
    Placement would offer none, and the fault says why."""
    with pytest.raises(exceptions.NoValidHost) as err:
        offered(metadata_fleet, {'hw_architecture': 's390x'})
    assert str(err.value) == (
        'No compute host reports HW_ARCH_S390X, which the image needs for '
        'hw_architecture=s390x, image_metadata_prefilter family '
        'architecture; each one reports another HW_ARCH_* trait.')


#: Hosts that report no HW_ARCH_* trait (devstack's fake driver, a z/VM
#: host) beside one that does, and what Nova's compute-node records say
#: each runs (supported_instances; Nova's fake driver lists x86_64 only).
ARCHLESS = {'kvm-x86': (('HW_ARCH_X86_64',), {'i686', 'x86_64'}),
            'fake': ((), {'x86_64'}),
            'zvm': ((), {'s390x'})}


def offered_beside_archless(placement, hosts, properties, records=True):
    """Candidates among ``hosts`` (names of ARCHLESS), with or without
    Nova's records of what they run (only inside nova-scheduler)."""
    client = placement.client()
    names = {fleet.create_provider(
        client, name, fleet.DEFAULT_INVENTORY,
        traits=(fleet.NOVA_COMPUTE_NODE, *IMAGE_TYPES,
                *ARCHLESS[name][0])): name for name in hosts}
    asked = []

    def host_guests(ctxt, uuids):
        asked.append(sorted(names[u] for u in uuids))
        return {u: ARCHLESS[names[u]][1] for u in uuids}

    filters = settings.FilterSettings.defaults(
        image_metadata_families=('architecture',))
    pipeline = filter_pipeline.RequestFilterPipeline.from_settings(
        filters, placement=client,
        host_guests=host_guests if records else None)
    found = our_filters.get_candidates(
        client, pipeline, our_filters.RequestSpec.for_boot(
            'qcow2', RESOURCES, properties=properties))
    return sorted(names[u] for u in found.provider_uuids), asked


def test_a_host_without_an_arch_trait_that_runs_no_such_guest(
        fresh_placement):
    """devstack's fake driver reports no HW_ARCH_* trait and runs x86_64
    guests: an s390x image is refused naming the trait, not left to
    ImagePropertiesFilter's bare "No valid host"."""
    with pytest.raises(exceptions.NoValidHost) as err:
        offered_beside_archless(fresh_placement, ('kvm-x86', 'fake'),
                                {'hw_architecture': 's390x'})
    assert str(err.value) == (
        'No compute host reports HW_ARCH_S390X, which the image needs for '
        'hw_architecture=s390x, image_metadata_prefilter family '
        'architecture; the 1 host(s) with no HW_ARCH_* trait run only '
        'x86_64 guests.')


def test_a_host_without_an_arch_trait_still_boots_its_own(fresh_placement):
    """A z/VM host (no HW_ARCH_* trait, s390x guests) takes the s390x
    image; the fake one is offered too (ImagePropertiesFilter drops it)."""
    hosts, asked = offered_beside_archless(
        fresh_placement, ('kvm-x86', 'fake', 'zvm'),
        {'hw_architecture': 's390x'})
    assert hosts == ['fake', 'zvm']
    assert asked == [['fake', 'zvm']]


def test_without_novas_records_hosts_without_an_arch_trait_decide(
        fresh_placement):
    """Outside nova-scheduler (or with ImagePropertiesFilter off) nothing
    says what such a host runs: it is offered, as before."""
    hosts, _ = offered_beside_archless(
        fresh_placement, ('kvm-x86', 'fake'), {'hw_architecture': 's390x'},
        records=False)
    assert hosts == ['fake']


def test_a_carried_arch_trait_asks_nothing_more(fresh_placement):
    hosts, asked = offered_beside_archless(
        fresh_placement, ('kvm-x86', 'fake'), {'hw_architecture': 'i686'})
    assert hosts == ['fake', 'kvm-x86']
    assert asked == []


def cli(*args):
    return subprocess.run(
        [sys.executable, '-m', 'image_type_filter.cmd.main', *args],
        capture_output=True, text=True, timeout=120, env=clean_env())


def test_explain_names_the_property_and_family(fresh_placement, tmp_path):
    client = fresh_placement.client()
    for name, traits in HOSTS.items():
        fleet.create_provider(client, name, fleet.DEFAULT_INVENTORY,
                              traits=(fleet.NOVA_COMPUTE_NODE, *IMAGE_TYPES,
                                      *traits))
    conf = tmp_path / 'nova.conf'
    conf.write_text(fresh_placement.nova_conf_section() +
                    '[image_metadata_prefilter]\nfamilies = storage_bus, '
                    'architecture\n')
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'qcow2', '--image-property', 'hw_disk_bus=scsi',
               '--image-property', 'hw_architecture=i686', '--explain',
               '-f', 'json')
    assert proc.returncode == 0, proc.stderr
    rows = {r['name']: r for r in json.loads(proc.stdout)}
    assert rows['kvm-x86']['result'] == 'candidate'
    assert rows['vmware']['reasons'] == [
        'root_required COMPUTE_STORAGE_BUS_SCSI: lacks it, for '
        'hw_disk_bus=scsi, image_metadata_prefilter family storage_bus']
    assert rows['kvm-arm']['reasons'] == [
        'root_required !HW_ARCH_AARCH64: carries it, for '
        'hw_architecture=i686 (boots on HW_ARCH_I686 or HW_ARCH_X86_64 or a '
        'host with no HW_ARCH_* trait), image_metadata_prefilter family '
        'architecture']
    # --family tries a family the file does not enable.
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'qcow2', '--image-property', 'hw_vif_model=e1000',
               '--family', 'vif_model', '-f', 'value', '-c', 'name')
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == ['kvm-arm', 'kvm-x86']
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'qcow2', '--image-property', 'hw_vif_model=vmxnet3',
               '--family', 'all')
    assert proc.returncode == 3
    assert 'COMPUTE_NET_VIF_MODEL_VMXNET3' in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def status(conf, *args):
    proc = cli('status', '--config-file', str(conf), '-f', 'json', *args)
    return proc.returncode, {row['check']: row for row in
                             json.loads(proc.stdout or '[]')}, proc


def test_status_per_family_and_novas_own_prefilter(fresh_placement,
                                                   tmp_path):
    client = fresh_placement.client()
    uuids = {name: fleet.create_provider(
        client, name, fleet.DEFAULT_INVENTORY,
        traits=(fleet.NOVA_COMPUTE_NODE, *IMAGE_TYPES, *traits))
        for name, traits in HOSTS.items()}
    conf = tmp_path / 'nova.conf'
    conf.write_text(fresh_placement.nova_conf_section())
    # No family enabled: only the image-type checks, ready.
    code, rows, proc = status(conf)
    assert code == 0, proc.stderr
    assert not [c for c in rows if c.startswith('Image metadata')]
    # The VMware host reports no storage bus: not ready for that family.
    code, rows, proc = status(conf, '--family', 'storage_bus',
                              '--family', 'architecture')
    assert code == 2, proc.stderr
    bus = rows['Image metadata: storage_bus']
    assert bus['result'] == 'Failure'
    assert '1 of 3 compute node(s)' in bus['details']
    assert ': vmware.' in bus['details']
    assert rows['Image metadata: architecture']['result'] == 'Success'
    # Once it reports one, the family is clean.
    traits, generation = client.get_provider_traits(uuids['vmware'])
    client.put_provider_traits(
        uuids['vmware'], traits | {'COMPUTE_STORAGE_BUS_SCSI'}, generation)
    code, rows, proc = status(conf, '--family', 'storage_bus')
    assert code == 0, proc.stderr
    # Enabled in the file, beside Nova's own prefilter: a warning.
    conf.write_text(fresh_placement.nova_conf_section() +
                    '[image_metadata_prefilter]\nfamilies = storage_bus\n'
                    '[scheduler]\nimage_metadata_prefilter = true\n')
    code, rows, proc = status(conf)
    assert code == 1, proc.stderr
    assert rows['Image metadata: storage_bus']['result'] == 'Success'
    assert rows["Nova's image_metadata_prefilter"]['result'] == 'Warning'


@pytest.mark.slow
def test_rare_architecture_benchmark_smoke(tmp_path):
    """The benchmark at a tiny size: it runs, and what it counts is right
    (every rare host is found; the prefilter offers no other). No timing
    is asserted."""
    out = tmp_path / 'arch.json'
    proc = subprocess.run(
        [sys.executable, '-m', 'benchmarks.rare_architectures', '--hosts',
         '30', '--backend', 'sqlite', '--asks', '2', '--runs', '1',
         '--build-processes', '1', '--json',
         str(out)], capture_output=True, text=True, timeout=600,
        env=clean_env())
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result['hosts'] == 30
    for arch in ('aarch64', 'ppc64le', 's390x'):
        row = result['no_valid_host'][arch]
        assert row['hosts'] == 1
        for variant in ('image_properties_filter', 'prefilter'):
            cell = row['default_order/' + variant]
            assert cell == {'no_valid_host': 0, 'asks': 2, 'rate_pct': 0.0,
                            'wrong_hosts': 0}
    assert '| aarch64 | 1 | default_order | 0 of 2 | 0 of 2 |' in proc.stdout
