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

"""Every driver and option combination of the capability table."""

import pytest

from image_type_common import exceptions
from image_type_common import image_types
from virt_capabilities import conf as vc_conf
from virt_capabilities import drivers
from virt_capabilities import settings

#: Nova 34.0.0's table, copied by hand from each driver's ``capabilities``
#: (the ``supports_image_type_*`` entries that are True), not derived from
#: the code under test: every driver nova 31 to 34 ships.
NOVA_TABLE = {
    'fake.FakeDriver': 'raw',                    # nova/virt/fake.py
    'fake.FakeDriverWithoutFakeNodes': 'raw',    # FakeDriver's, inherited
    'ironic.IronicDriver': 'ami qcow2 raw',      # nova/virt/ironic/driver.py
    'vmwareapi.VMwareVCDriver': 'iso vmdk',      # nova/virt/vmwareapi
    'zvm.ZVMDriver': 'raw',                      # nova/virt/zvm/driver.py
    'libvirt.LibvirtDriver': 'aki ami ari iso qcow2 raw',  # default options
}
#: Drivers older Nova releases had and 31 to 34 do not.
REMOVED = ['hyperv.HyperVDriver', 'powervm.PowerVMDriver',
           'xenapi.XenAPIDriver', 'nova.virt.xenapi.XenAPIDriver']


def caps(write_conf, text):
    return drivers.capabilities(settings.NodeSettings.from_conf(
        vc_conf.load([write_conf(text)])))


def test_the_table_knows_exactly_the_supported_drivers():
    assert set(drivers.KNOWN_DRIVERS) == set(NOVA_TABLE)


@pytest.mark.parametrize('driver', REMOVED)
def test_a_removed_driver_is_refused_listing_the_known_ones(write_conf,
                                                           driver):
    with pytest.raises(exceptions.ConfigError) as err:
        caps(write_conf, 'compute_driver = %s\n' % driver)
    assert err.value.exit_code == 2
    assert 'no supported Nova' in str(err.value)
    for known in NOVA_TABLE:
        assert known in str(err.value)


@pytest.mark.parametrize('driver,expected', sorted(NOVA_TABLE.items()))
@pytest.mark.parametrize('prefix', ['', 'nova.virt.'])
def test_static_drivers(write_conf, driver, expected, prefix):
    result = caps(write_conf, 'compute_driver = %s%s\n' % (prefix, driver))
    assert result.formats == set(expected.split())
    assert result.compute_driver == driver
    assert result.traits == {'COMPUTE_IMAGE_TYPE_' + f.upper()
                             for f in expected.split()}


#: nova/virt/libvirt/driver.py: qcow2 unless images_type is rbd or lvm
#: without force_raw_images; ploop only with virt_type = parallels. Written
#: out row by row (rbd without forced raw is refused; its own test).
LIBVIRT_TABLE = [
    # images_type, force_raw_images, virt_type: formats
    ('default', True, 'kvm', 'aki ami ari iso qcow2 raw'),
    ('default', False, 'kvm', 'aki ami ari iso qcow2 raw'),
    ('qcow2', False, 'qemu', 'aki ami ari iso qcow2 raw'),
    ('raw', False, 'kvm', 'aki ami ari iso qcow2 raw'),
    ('flat', True, 'lxc', 'aki ami ari iso qcow2 raw'),
    ('rbd', True, 'kvm', 'aki ami ari iso qcow2 raw'),
    ('lvm', True, 'kvm', 'aki ami ari iso qcow2 raw'),
    ('lvm', False, 'kvm', 'aki ami ari iso raw'),
    ('lvm', False, 'qemu', 'aki ami ari iso raw'),
    ('ploop', True, 'parallels', 'aki ami ari iso ploop qcow2 raw'),
    ('ploop', False, 'parallels', 'aki ami ari iso ploop qcow2 raw'),
    ('lvm', False, 'parallels', 'aki ami ari iso ploop raw'),
    ('rbd', True, 'parallels', 'aki ami ari iso ploop qcow2 raw'),
]


@pytest.mark.parametrize('images_type,force_raw,virt_type,expected',
                         LIBVIRT_TABLE)
def test_libvirt_options(write_conf, images_type, force_raw, virt_type,
                         expected):
    result = caps(write_conf, '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        force_raw_images = %s
        [libvirt]
        images_type = %s
        virt_type = %s
        ''' % (force_raw, images_type, virt_type))
    assert result.formats == set(expected.split())


def test_force_raw_images_defaults_true(write_conf):
    result = caps(write_conf, '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [libvirt]
        images_type = lvm
        ''')
    assert 'qcow2' in result.formats


def test_rbd_without_forced_raw_is_refused_like_nova(write_conf):
    with pytest.raises(exceptions.ConfigError, match='nova-compute refuses'):
        caps(write_conf, '''
            [DEFAULT]
            compute_driver = libvirt.LibvirtDriver
            force_raw_images = False
            [libvirt]
            images_type = rbd
            ''')


def test_exclude_list_drops_formats(write_conf):
    result = caps(write_conf, '''
        [DEFAULT]
        compute_driver = libvirt.LibvirtDriver
        [compute]
        image_type_exclude_list = qcow2, iso
        ''')
    assert result.formats == {'aki', 'ami', 'ari', 'raw'}
    assert result.excluded == {'qcow2', 'iso'}


@pytest.mark.parametrize('entry,says', [
    ('QCOW2', "write 'qcow2'"), ('Iso', "write 'iso'"),
    ('qcow3', 'is no image type'), ('ext4', 'is no image type')])
def test_an_entry_nova_compute_would_ignore_is_refused(write_conf, entry,
                                                       says):
    """nova-compute compares case-sensitively: 'QCOW2' excludes nothing
    there, so reporting either answer would fight it or the operator."""
    with pytest.raises(exceptions.ConfigError) as err:
        caps(write_conf, '''
            [DEFAULT]
            compute_driver = libvirt.LibvirtDriver
            [compute]
            image_type_exclude_list = raw, %s
            ''' % entry)
    assert says in str(err.value) and repr(entry) in str(err.value)


def test_exclude_list_of_unsupported_format_is_harmless(write_conf):
    result = caps(write_conf, '''
        [DEFAULT]
        compute_driver = vmwareapi.VMwareVCDriver
        [compute]
        image_type_exclude_list = qcow2
        ''')
    assert result.formats == {'iso', 'vmdk'}


@pytest.mark.parametrize('text,names', [
    ('compute_driver = libvirt.LibvirtDrvier\n',
     ["'libvirt.LibvirtDrvier'", 'libvirt.LibvirtDriver']),
    ('compute_driver = nova.virt.foo.Bar\n', ['foo.Bar', 'zvm.ZVMDriver']),
    ('[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n[libvirt]\n'
     'images_type = ceph\n', ["'ceph'", 'rbd']),
    ('[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n[libvirt]\n'
     'virt_type = xen2\n', ["'xen2'", 'parallels']),
    ('[DEFAULT]\ncompute_driver = fake.FakeDriver\n[compute]\n'
     'image_type_exclude_list = qcow3\n', ['qcow3', 'vmdk']),
    ('[DEFAULT]\ncompute_driver = fake.FakeDriver\nforce_raw_images = maybe\n',
     ['force_raw_images', 'maybe']),
    ('[DEFAULT]\nhost = x\n', ['compute_driver is not set']),
])
def test_bad_values_name_the_value_and_the_accepted_ones(write_conf, text,
                                                         names):
    with pytest.raises(exceptions.ConfigError) as err:
        caps(write_conf, text)
    message = str(err.value)
    assert '\n' not in message
    for name in names:
        assert name in message


def test_unknown_options_and_sections_are_ignored(write_conf):
    result = caps(write_conf, '''
        [DEFAULT]
        compute_driver = zvm.ZVMDriver
        my_own_option = 1
        [neutron]
        url = http://example.invalid
        ''')
    assert result.formats == {'raw'}


def test_catalogue_comes_from_os_traits():
    import os_traits
    assert set(image_types.TRAITS) == set(
        os_traits.get_traits(prefix='COMPUTE_IMAGE_TYPE_'))
    for fmt, trait in image_types.TRAIT_BY_FORMAT.items():
        assert image_types.FORMAT_BY_TRAIT[trait] == fmt
        assert image_types.trait_for_format(fmt.upper()) == trait
