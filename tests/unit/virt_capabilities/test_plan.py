"""The node plan: where state goes, and what show and report share."""

import pytest

from image_type_common import exceptions
from virt_capabilities import plan


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
    assert plan_for(tmp_path, text).state_file == expected


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
