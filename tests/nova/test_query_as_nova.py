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

"""candidates' rebuilt query against Nova's own, flavor by flavor, image
by image.

Each case goes through Nova's ``ResourceRequest`` (via
``resources_from_request_spec``, which adds the aggregates, the limit and
the group policy) and through ``nova_query``; the query strings must be
equal, character for character, and where nova-api would refuse the boot
(a value it does not accept, a flavor and image that conflict) both
refuse. Then the request filters: Nova's ``process_reqspec`` on a real
RequestSpec with real host aggregates, against ``nova_request_filters``.
Runs on the installed Nova, so on both ends of the supported range.
"""

import importlib.metadata

import pytest

pytest.importorskip('nova')

from nova import context as nova_context  # noqa: E402
from nova import exception as nova_exception  # noqa: E402
from nova import objects  # noqa: E402
from nova import test  # noqa: E402
from nova.scheduler import request_filter  # noqa: E402
from nova.scheduler import utils as scheduler_utils  # noqa: E402
import os_resource_classes  # noqa: E402
from oslo_utils.fixture import uuidsentinel  # noqa: E402

from image_type_filter import exceptions as filter_exceptions  # noqa: E402
from image_type_filter.client import nova_query  # noqa: E402
from image_type_filter.client import nova_request_filters  # noqa: E402

RELEASE = int(importlib.metadata.version('nova').split('.')[0])
STANDARD = frozenset(os_resource_classes.STANDARDS)
UEFI = {'hw_firmware_type': 'uefi'}

#: (extra specs, flavor fields) -> the flavor cases.
FLAVORS = {
    'plain': {},
    'explicit PCPU': {'resources:VCPU': '0', 'resources:PCPU': '2'},
    'dedicated': {'hw:cpu_policy': 'dedicated'},
    'dedicated, emulator thread': {'hw:cpu_policy': 'dedicated',
                                   'hw:emulator_threads_policy': 'isolate'},
    'mixed by mask': {'hw:cpu_policy': 'mixed',
                      'hw:cpu_dedicated_mask': '^0'},
    'mixed by realtime': {'hw:cpu_policy': 'mixed', 'hw:cpu_realtime': 'yes',
                          'hw:cpu_realtime_mask': '^0-1'},
    'thread isolate': {'hw:cpu_policy': 'dedicated',
                       'hw:cpu_thread_policy': 'isolate'},
    'thread require': {'hw:cpu_policy': 'dedicated',
                       'hw:cpu_thread_policy': 'require'},
    'shared': {'hw:cpu_policy': 'shared'},
    'traits': {'trait:HW_CPU_X86_AVX2': 'required',
               'trait:CUSTOM_X': 'forbidden', 'trait:CUSTOM_Y': 'Required'},
    'granular, isolate': {'resources1:VGPU': '1',
                          'trait1:CUSTOM_GPU': 'required',
                          'resources2:VGPU': '1', 'group_policy': 'isolate'},
    'granular, no policy': {'resources1:VGPU': '1', 'resources2:VGPU': '1'},
    'granular, bad policy': {'group_policy': 'bogus',
                             'resources_X-1:VGPU': '1'},
    'ironic': {'resources:CUSTOM_BAREMETAL_GOLD': '1', 'resources:VCPU': '0',
               'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0'},
    'invalid resources': {'resources:NOT_A_CLASS': '1',
                          'resources:VCPU': '-1', 'resources:MEMORY_MB': 'x'},
    'pmem': {'hw:pmem': '4GB, 16GB,4GB,'},
    'vtpm crb': {'hw:tpm_version': '2.0', 'hw:tpm_model': 'tpm-crb'},
    'vtpm 1.2': {'hw:tpm_version': '1.2'},
    'pci socket': {'hw:pci_numa_affinity_policy': 'socket'},
    'secure boot': {'os:secure_boot': 'required'},
    'maxphysaddr': {'hw:maxphysaddr_mode': 'emulate',
                    'hw:maxphysaddr_bits': '42'},
    'packed ring': {'hw:virtio_packed_ring': 'true'},
    'ephemeral encryption': {'hw:ephemeral_encryption': 'true',
                             'hw:ephemeral_encryption_format': 'luks'},
    'sound': {'hw:sound_model': 'virtio'},
    'accelerator': {'accel:device_profile': 'gpu-profile'},
    'bad cpu policy': {'hw:cpu_policy': 'bogus'},
    'bad tpm version': {'hw:tpm_version': '3.0'},
}

IMAGES = {
    'plain': {},
    'traits': {'trait:CUSTOM_A': 'required', 'trait1:CUSTOM_B': 'required',
               'trait:CUSTOM_C': 'forbidden'},
    'dedicated': {'hw_cpu_policy': 'dedicated'},
    'mixed, no mask': {'hw_cpu_policy': 'mixed'},
    'thread isolate': {'hw_cpu_thread_policy': 'isolate',
                       'hw_cpu_policy': 'dedicated'},
    'mem encryption': dict(UEFI, hw_mem_encryption='True'),
    'mem encryption es': dict(UEFI, hw_mem_encryption='yes',
                              hw_mem_encryption_model='amd-sev-es'),
    'mem encryption snp': dict(UEFI, hw_mem_encryption='1',
                               hw_mem_encryption_model='amd-sev-snp',
                               hw_firmware_stateless='true'),
    'mem encryption, bios': {'hw_mem_encryption': 'true'},
    'vtpm': {'hw_tpm_version': '2.0'},
    'vtpm crb': {'hw_tpm_version': '2.0', 'hw_tpm_model': 'tpm-crb'},
    'vtpm bogus': {'hw_tpm_version': 'bogus'},
    'secure boot': {'os_secure_boot': 'required'},
    'secure boot optional': {'os_secure_boot': 'optional'},
    'maxphysaddr': {'hw_maxphysaddr_mode': 'passthrough'},
    'stateless': dict(UEFI, hw_firmware_stateless='true'),
    'stateless, bios': {'hw_firmware_type': 'bios',
                        'hw_firmware_stateless': 'true'},
    'pci socket': {'hw_pci_numa_affinity_policy': 'socket'},
    'legacy arch': {'architecture': 'x86_64', 'vmware_adaptertype': 'ide'},
    'packed ring': {'hw_virtio_packed_ring': 'yes'},
    'ephemeral encryption': {'hw_ephemeral_encryption': 'true',
                             'hw_ephemeral_encryption_format': 'luksv2'},
    'sound': {'hw_sound_model': 'virtio'},
    'metadata': {'hw_disk_bus': 'scsi', 'hw_architecture': 'amd64',
                 'hw_vif_model': 'virtuale1000'},
    'metadata, bad name': {'hw_disk_bus': 'scsi', 'hw_viommu_model': 'auto'},
}

#: (flavor extra specs, image properties): where the two meet.
PAIRS = {
    'policies conflict': ({'hw:cpu_policy': 'shared'},
                          {'hw_cpu_policy': 'dedicated'}),
    'thread policies conflict': ({'hw:cpu_policy': 'dedicated',
                                  'hw:cpu_thread_policy': 'require'},
                                 {'hw_cpu_thread_policy': 'isolate'}),
    'tpm conflict': ({'hw:tpm_version': '2.0'}, {'hw_tpm_version': '1.2'}),
    'mem encryption conflict': ({'hw:mem_encryption': 'false'},
                                dict(UEFI, hw_mem_encryption='true')),
    'mem encryption from flavor': ({'hw:mem_encryption': 'true'}, UEFI),
    'realtime mask from image': ({'hw:cpu_policy': 'mixed',
                                  'hw:cpu_realtime': 'true'},
                                 {'hw_cpu_realtime_mask': '^0'}),
    'same secure boot': ({'os:secure_boot': 'required'},
                         {'os_secure_boot': 'required'}),
}

FLAVOR_SIZE = dict(vcpus=4, memory_mb=2048, root_gb=20, ephemeral_gb=2,
                   swap=1025)

#: What nova-api raises for a boot it refuses.
NOVA_REFUSES = (nova_exception.NovaException, ValueError)


def _cases():
    for name, specs in FLAVORS.items():
        yield 'flavor %s' % name, specs, {}
    for name, props in IMAGES.items():
        yield 'image %s' % name, {}, props
    for name, (specs, props) in PAIRS.items():
        yield name, specs, props


CASES = list(_cases())


def _nova_spec(specs, props, is_bfv=False, **fields):
    objects.register_all()
    flavor = objects.Flavor(name='f', extra_specs=dict(specs),
                            **FLAVOR_SIZE)
    image = objects.ImageMeta.from_dict(
        {'id': uuidsentinel.image, 'name': 'img', 'disk_format': 'qcow2',
         'properties': dict(props)})
    fields.setdefault('availability_zone', None)
    fields.setdefault('project_id', 'p0')
    return objects.RequestSpec(
        flavor=flavor, image=image, is_bfv=is_bfv, requested_resources=[],
        request_level_params=objects.RequestLevelParams(), **fields)


def _nova_query(ctxt, spec):
    return scheduler_utils.resources_from_request_spec(
        ctxt, spec, None).to_querystring()


def _our_request(specs, props, is_bfv=False, **fields):
    fields.setdefault('project_id', 'p0')
    return nova_query.Request(
        flavor=nova_query.Flavor('f', FLAVOR_SIZE['vcpus'],
                                 FLAVOR_SIZE['memory_mb'],
                                 FLAVOR_SIZE['root_gb'],
                                 FLAVOR_SIZE['ephemeral_gb'],
                                 FLAVOR_SIZE['swap'], dict(specs)),
        image=nova_query.Image('i', 'img', 'qcow2', dict(props)),
        is_bfv=is_bfv, release=RELEASE, **fields)


def _ours(specs, props, is_bfv=False, **fields):
    request = _our_request(specs, props, is_bfv, **fields)
    return nova_query.build(request, STANDARD, limit=1000).querystring()


def _novas(specs, props, is_bfv=False, **fields):
    return _nova_query(None, _nova_spec(specs, props, is_bfv, **fields))


@pytest.mark.parametrize('name,specs,props', CASES,
                         ids=[c[0] for c in CASES])
@pytest.mark.parametrize('is_bfv', [False, True], ids=['image', 'volume'])
def test_the_query_is_novas(name, specs, props, is_bfv):
    try:
        nova = _novas(specs, props, is_bfv)
    except NOVA_REFUSES:
        # Where nova-api refuses the pair, so does the rebuilt query.
        with pytest.raises(nova_query.NovaRefuses):
            _ours(specs, props, is_bfv)
        return
    assert _ours(specs, props, is_bfv) == nova


@pytest.mark.parametrize('name,specs,props', CASES,
                         ids=[c[0] for c in CASES])
def test_the_fallback_query_is_novas(name, specs, props):
    """Without the pinning translation (nova-scheduler's second query for
    hw:cpu_policy=dedicated), and whether Nova asks it at all."""
    try:
        spec = _nova_spec(specs, props)
        first = scheduler_utils.resources_from_request_spec(None, spec, None)
        nova = scheduler_utils.resources_from_request_spec(
            None, spec, None, enable_pinning_translate=False)
    except NOVA_REFUSES:
        return
    request = _our_request(specs, props)
    assert nova_query.build(request, STANDARD).cpu_pinning_requested is \
        first.cpu_pinning_requested
    assert nova_query.build(request, STANDARD, pinning=False).querystring() \
        == nova.to_querystring()


def test_aggregates_limit_and_group_policy_are_novas():
    destination = dict(aggregates=['%s,%s' % (uuidsentinel.a, uuidsentinel.b),
                                   uuidsentinel.c],
                       forbidden_aggregates={uuidsentinel.d, uuidsentinel.e})
    for specs in (FLAVORS['plain'], FLAVORS['granular, isolate']):
        spec = _nova_spec(specs, {}, requested_destination=objects.
                          Destination(**destination))
        spec.scheduler_hints = {'group': [uuidsentinel.group]}
        ours = _our_request(specs, {}, aggregates=list(
            destination['aggregates']), forbidden_aggregates=set(
            destination['forbidden_aggregates']), in_server_group=True)
        assert nova_query.build(ours, STANDARD).querystring() == \
            _nova_query(None, spec)
        assert 'limit' not in _nova_query(None, spec)


class TestRequestFiltersAsNova(test.TestCase):
    """Nova's process_reqspec on real aggregates in Nova's API database."""

    def _clear_attrs(self):
        pass  # see tests/nova/base.py

    def setUp(self):
        super().setUp()
        self.ctxt = nova_context.get_admin_context()
        self.aggregates = []
        for name, metadata in (
                ('az1', {'availability_zone': 'az1'}),
                ('tenant', {'filter_tenant_id': 'p1',
                            'filter_tenant_id2': 'p2'}),
                ('avx', {'trait:HW_CPU_X86_AVX2': 'required'}),
                ('gpu', {'trait:CUSTOM_GPU': 'required',
                         'trait:CUSTOM_OTHER': 'forbidden'})):
            aggregate = objects.Aggregate(self.ctxt, name=name,
                                          uuid=getattr(uuidsentinel, name),
                                          metadata=metadata)
            aggregate.create()
            self.aggregates.append(nova_request_filters.Aggregate(
                aggregate.uuid, name, dict(metadata)))

    def both(self, specs, props, options=(), **fields):
        """(Nova's query or its failure, ours) for one request."""
        for (group, name), value in options:
            self.flags(**{name: value, 'group': group})
        owner = RELEASE >= 34 and request_filter._should_filter_by_owner(
            self.ctxt)
        spec = _nova_spec(specs, props, **fields)
        try:
            request_filter.process_reqspec(self.ctxt, spec)
            nova = _nova_query(self.ctxt, spec)
        except nova_exception.RequestFilterFailed:
            nova = 'RequestFilterFailed'
        cloud = nova_request_filters.Cloud(
            release=RELEASE, options={**nova_request_filters.NOVA_OPTIONS,
                                      **dict(options)},
            aggregates=self.aggregates, standard_classes=STANDARD,
            owner_nova=bool(owner))
        request = _our_request(specs, props, **fields)
        try:
            nova_request_filters.run(cloud, request)
            ours = nova_query.build(request, STANDARD).querystring()
        except filter_exceptions.NoValidHost:
            ours = 'RequestFilterFailed'
        return nova, ours

    def assert_same(self, specs, props, options=(), **fields):
        nova, ours = self.both(specs, props, options, **fields)
        self.assertEqual(nova, ours)
        return nova

    def test_every_flavor_and_image(self):
        options = ((('scheduler', 'query_placement_for_image_type_support'),
                    True),)
        seen = {}
        for name, specs, props in CASES:
            try:
                _novas(specs, props)
            except NOVA_REFUSES:
                continue  # nova-api refuses these before the scheduler
            with self.subTest(case=name):
                seen.setdefault(self.assert_same(specs, props, options),
                                []).append(name)
        # The corpus means something: half the cases ask a query of their
        # own (a flavor and an image often ask the same one),
        # so a translation or filter left out shows.
        compared = sum(map(len, seen.values()))
        self.assertGreaterEqual(len(seen), compared // 2,
                                [names for names in seen.values()
                                 if len(names) > 1])

    def test_availability_zone_and_tenant(self):
        tenant = ((('scheduler', 'limit_tenants_to_placement_aggregate'),
                   True),)
        query = self.assert_same({}, {}, tenant, project_id='p2',
                                 availability_zone='az1')
        self.assertIn(uuidsentinel.tenant, query)
        self.assertIn(uuidsentinel.az1, query)
        self.assert_same({}, {}, tenant, project_id='p3',
                         availability_zone='elsewhere')
        required = tenant + ((('scheduler',
                               'placement_aggregate_required_for_tenants'),
                              True),)
        self.assertEqual('RequestFilterFailed', self.assert_same(
            {}, {}, required, project_id='p3'))

    def test_isolated_aggregates(self):
        isolate = ((('scheduler', 'enable_isolated_aggregate_filtering'),
                    True),)
        for specs, props, isolated in (
                ({}, {}, True),
                ({'trait:HW_CPU_X86_AVX2': 'required'}, {}, True),
                ({}, {'trait:CUSTOM_GPU': 'required'}, True),
                ({'trait1:CUSTOM_GPU': 'required', 'resources1:VGPU': '1'},
                 {'trait:HW_CPU_X86_AVX2': 'required'}, False)):
            with self.subTest(specs=specs, props=props):
                query = self.assert_same(specs, props, isolate)
                self.assertEqual(isolated, 'member_of' in query)

    def test_image_metadata_prefilter(self):
        prefilter = ((('scheduler', 'image_metadata_prefilter'), True),)
        for name in ('metadata', 'metadata, bad name', 'legacy arch',
                     'plain'):
            with self.subTest(image=name):
                self.assert_same({}, IMAGES[name], prefilter)
