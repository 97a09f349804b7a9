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

"""The node plan: where state goes, and what show and report share."""

import pytest

from image_type_common import exceptions
from virt_capabilities import plan
from virt_capabilities.cmd import show


def plan_for(tmp_path, text):
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = h\n'
                    + text)
    return plan.NodePlan.from_files([str(path)])


@pytest.mark.parametrize('text,expected', [
    ('', None),
    ('state_path = /srv/nova\n', '/srv/nova/virt_capabilities.json'),
    ('state_path = /srv/nova\n[virt_capabilities]\nstate_file = /x.json\n',
     '/x.json'),
])
def test_state_file_only_under_state_path_or_where_told(tmp_path, text,
                                                        expected):
    assert plan_for(tmp_path, text).settings.state_file == expected


def test_without_state_path_compute_id_is_still_read_beside_nova_conf(
        tmp_path):
    """nova-compute reads it beside its config files whatever
    state_path says (nova/virt/node.py:54-55)."""
    uuid = '7d1a5f0e-2b3c-4d5e-8f90-a1b2c3d4e5f6'
    (tmp_path / 'compute_id').write_text(uuid)
    assert [r.value for r in plan_for(tmp_path, '').refs] == [uuid]


def test_nova_compute_as_owner_leaves_only_custom_traits(tmp_path):
    result = plan_for(tmp_path, '[virt_capabilities]\ncustom_traits = '
                      'CUSTOM_A\nimage_type_traits_owner = nova-compute\n')
    assert result.traits == {'CUSTOM_A'}
    assert result.capabilities.traits == {'COMPUTE_IMAGE_TYPE_RAW'}


def test_a_state_file_that_is_not_its_own_is_refused_by_show_too(tmp_path):
    backup = tmp_path / 'nova.conf.bak'
    backup.write_text('[DEFAULT]\ndebug = True\n')
    with pytest.raises(exceptions.ConfigError) as caught:
        plan_for(tmp_path, '[virt_capabilities]\nstate_file = %s\n' % backup)
    assert str(backup) in str(caught.value)
    assert backup.read_text() == '[DEFAULT]\ndebug = True\n'


# -- host_architecture: only what Nova's Architecture field accepts ---------

#: Nova 34.0.0 nova/virt/arch.py:57-66 (ALL), which nova/objects/fields.py
#: Architecture.ALL (170) is: copied from Nova's source, not from ours.
NOVA_ARCHITECTURES = (
    'alpha', 'armv6', 'armv7l', 'armv7b',
    'aarch64', 'cris', 'i686', 'ia64', 'lm32',
    'm68k', 'microblaze', 'microblazeel', 'mips', 'mipsel',
    'mips64', 'mips64el', 'openrisc', 'parisc', 'parisc64',
    'ppc', 'ppcle', 'ppc64', 'ppc64le', 'ppcemb',
    's390', 's390x', 'sh4', 'sh4eb', 'sparc',
    'sparc64', 'unicore32', 'x86_64', 'xtensa', 'xtensaeb')
#: Architecture.canonicalize (fields.py:193-219): what it rewrites.
NOVA_ALIASES = {'i386': 'i686', 'i486': 'i686', 'i586': 'i686',
                'x86_32': 'i686', 'x86_32p': 'i686', 'amd64': 'x86_64'}


def libvirt_plan(tmp_path, architecture):
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n'
                    '[virt_capabilities]\nhost_architecture = %s\n'
                    % architecture)
    return plan.NodePlan.from_files([str(path)], ['any'])


@pytest.mark.parametrize('given', NOVA_ARCHITECTURES + tuple(NOVA_ALIASES))
def test_every_architecture_nova_accepts_is_accepted_as_nova_stores_it(
        tmp_path, given):
    for spelling in (given, given.upper()):  # Nova lower-cases it first
        assert libvirt_plan(tmp_path, spelling).host_architecture == \
            NOVA_ALIASES.get(given, given)


@pytest.mark.parametrize('given', ['banana', 'armv7', 'arm64', 'x86-64',
                                   'i86pc', 'armv7l,x86_64'])
def test_an_architecture_nova_refuses_is_refused_in_one_line(tmp_path,
                                                             given):
    with pytest.raises(exceptions.ConfigError) as caught:
        libvirt_plan(tmp_path, given)
    message = str(caught.value)
    assert '\n' not in message
    assert '[virt_capabilities] host_architecture' in message
    assert repr(given) in message and 'armv7l' in message


def test_armv7_is_refused_pointing_at_armv7l(tmp_path):
    with pytest.raises(exceptions.ConfigError, match='did you mean armv7l'):
        libvirt_plan(tmp_path, 'armv7')


def test_the_armv7l_node_keeps_its_arch_trait(tmp_path):
    assert libvirt_plan(tmp_path, 'armv7l').metadata_traits == {
        'HW_ARCH_ARMV7'}


# -- who owns the image types: nova-compute unless told otherwise ------------

def test_by_default_nova_compute_owns_the_image_type_traits(tmp_path):
    """Every supported Nova (31 to 34) reports them itself: by default the
    reporter leaves them to it, so one writer owns them."""
    result = plan_for(tmp_path, '[virt_capabilities]\n'
                      'custom_traits = CUSTOM_A\n')
    assert result.settings.image_type_traits_owner == 'nova-compute'
    assert not result.owns_image_types
    assert result.traits == {'CUSTOM_A'}
    assert show.columns(result)['image_type_traits_owner'] == 'nova-compute'


def test_the_reporter_owns_them_only_when_told(tmp_path):
    result = plan_for(tmp_path, '[virt_capabilities]\n'
                      'image_type_traits_owner = reporter\n')
    assert result.traits == {'COMPUTE_IMAGE_TYPE_RAW'}


# -- volume_only: declared where the node is configured ----------------------

def test_volume_only_is_refused_where_nova_compute_reports_an_image_type(
        tmp_path):
    with pytest.raises(exceptions.ConfigError) as caught:
        plan_for(tmp_path, '[virt_capabilities]\nvolume_only = True\n')
    assert 'image_type_exclude_list' in str(caught.value)
    assert '(raw)' in str(caught.value)  # the fake driver boots raw


def test_volume_only_keeps_the_marker_whoever_owns_the_image_types(
        tmp_path):
    for owner in ('nova-compute', 'reporter'):
        result = plan_for(tmp_path, '[compute]\nimage_type_exclude_list = '
                          'raw\n[virt_capabilities]\nvolume_only = True\n'
                          'image_type_traits_owner = %s\n' % owner)
        assert result.traits == {'CUSTOM_IMAGE_TYPE_FILTER_VOLUME_ONLY'}


def test_the_marker_is_not_a_custom_trait_to_list(tmp_path):
    with pytest.raises(exceptions.ConfigError, match='volume_only'):
        plan_for(tmp_path, '[virt_capabilities]\ncustom_traits = '
                 'CUSTOM_IMAGE_TYPE_FILTER_VOLUME_ONLY\n')


def test_a_node_that_boots_nothing_undeclared_is_told_how_to_declare_it(
        tmp_path, caplog):
    plan_for(tmp_path, '[compute]\nimage_type_exclude_list = raw\n')
    assert 'volume_only = True' in caplog.text
