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

"""The literal tables candidates rebuilds nova-scheduler from, against the
installed Nova: its request filters in order, its options and defaults,
the values its fields accept, the image fields it has, the memory
encryption traits and the compute API's maximum microversion."""

import importlib.metadata

import pytest

pytest.importorskip('nova')

from nova import conf as nova_conf  # noqa: E402
from nova import objects  # noqa: E402
from nova.api.openstack import api_version_request  # noqa: E402
from nova.objects import fields  # noqa: E402
from nova.scheduler import request_filter  # noqa: E402
from nova.virt import hardware  # noqa: E402

from image_type_filter.client import nova_query  # noqa: E402
from image_type_filter.client import nova_request_filters  # noqa: E402
from image_type_filter.diagnostics import nova_scheduler  # noqa: E402

RELEASE = int(importlib.metadata.version('nova').split('.')[0])
CONF = nova_conf.CONF


def test_the_request_filters_are_novas_in_its_order():
    novas = [f.__name__ for f in request_filter.ALL_REQUEST_FILTERS
             if not f.__name__.startswith('image_type_filter')]
    ours = [f.name for f in nova_request_filters.FILTERS
            if f.since <= RELEASE]
    assert ours == novas


def test_the_options_and_defaults_are_novas():
    for (group, name), default in nova_request_filters.NOVA_OPTIONS.items():
        assert CONF[group][name] == default, (group, name)


def test_the_compute_api_names_this_release():
    version = api_version_request.APIVersionRequest(
        api_version_request._MAX_API_VERSION)
    release, why = nova_scheduler.release_for(
        (version.ver_major, version.ver_minor))
    assert release == RELEASE or 'Nova %d' % RELEASE in why


@pytest.mark.parametrize('ours,novas', [
    (nova_query.CPU_POLICIES, 'CPUAllocationPolicy'),
    (nova_query.CPU_THREAD_POLICIES, 'CPUThreadAllocationPolicy'),
    (nova_query.EMULATOR_THREADS_POLICIES, 'CPUEmulatorThreadsPolicy'),
    (nova_query.TPM_VERSIONS, 'TPMVersion'),
    (nova_query.TPM_MODELS, 'TPMModel'),
    (nova_query.SECURE_BOOT, 'SecureBoot'),
    (nova_query.MAXPHYSADDR_MODES, 'MaxPhyAddrMode'),
    (nova_query.PCI_NUMA_POLICIES, 'PCINUMAAffinityPolicy'),
    (nova_query.FIRMWARE_TYPES, 'FirmwareType'),
    (nova_query.EPHEMERAL_ENCRYPTION_FORMATS,
     'BlockDeviceEncryptionFormatType'),
    (nova_query.SOUND_MODELS, 'SoundModelType'),
    (tuple(nova_query.MEM_ENCRYPTION_TRAITS[nova_query.NEWEST]),
     'MemEncryptionModel'),
])
def test_the_values_nova_accepts(ours, novas):
    enum = getattr(fields, novas, None)
    if enum is None:
        pytest.skip('Nova %d has no %s' % (RELEASE, novas))
    if novas == 'MemEncryptionModel':
        assert set(enum.ALL) == set(nova_query.MEM_ENCRYPTION_TRAITS[
            RELEASE])
        return
    assert tuple(enum.ALL) == ours


def test_the_image_fields_exist_from_their_release():
    objects.register_all()
    for name, (_, since) in nova_query.IMAGE_FIELDS.items():
        assert (name in objects.ImageMetaProps.fields) == (RELEASE >= since), \
            name


def test_the_memory_encryption_traits_are_novas():
    create = getattr(getattr(hardware, 'MemEncryptionConfig', None),
                     'create', None)
    if create is None or not callable(create):
        pytest.skip('Nova %d builds the trait inline (nova/scheduler/'
                    'utils.py; tests/nova/test_query_as_nova.py covers it)'
                    % RELEASE)
    assert {model: create(model).required_trait
            for model in fields.MemEncryptionModel.ALL} == \
        nova_query.MEM_ENCRYPTION_TRAITS[RELEASE]
