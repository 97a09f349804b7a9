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

"""What the reporter reads of the node, as nova-compute reads it, through
the command a user runs: ``compute_id`` where nova-compute finds it, and
``host_architecture`` only as Nova's architecture field accepts it."""

import subprocess
import sys

import pytest

from image_type_common import image_types
from placement_runner import writes
from tests import helpers

T = image_types.TRAIT_BY_FORMAT
LIBVIRT = ('[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n'
           '[virt_capabilities]\nimage_type_traits_owner = reporter\n')


def run_cli(*args, timeout=60):
    return subprocess.run([sys.executable, '-m', 'virt_capabilities.cmd.main',
                           *args], capture_output=True, text=True,
                          timeout=timeout, env=helpers.clean_env())


def node_files(tmp_path, placement_section, extra=''):
    """/etc/nova/nova.conf, and /var/lib/nova as its state_path."""
    etc, var = tmp_path / 'etc-nova', tmp_path / 'var-lib-nova'
    etc.mkdir()
    var.mkdir()
    conf = etc / 'nova.conf'
    conf.write_text(LIBVIRT + extra + '[DEFAULT]\nstate_path = %s\n%s'
                    % (var, placement_section))
    return etc, var, str(conf)


def test_compute_id_beside_nova_conf_names_the_provider(placement, tmp_path,
                                                        unique):
    """Where deployment tools put it (Nova's docs point there): nova-compute
    reads it before state_path, so the reporter does too."""
    client = placement.client()
    uuid = writes.create_resource_provider(client, 'by-uuid-' + unique)['uuid']
    etc, _, conf = node_files(tmp_path, placement.nova_conf_section())
    (etc / 'compute_id').write_text(uuid + '\n')
    proc = run_cli('report', '--config-file', conf)
    assert proc.returncode == 0, proc.stderr
    assert T['qcow2'] in client.get_provider_traits(uuid)[0]


@pytest.mark.parametrize('content', ['', '\n'], ids=['empty', 'newline'])
def test_an_empty_compute_id_is_refused_as_nova_compute_refuses_it(
        listener, tmp_path, content):
    """Not a silent fall-back to the host name: exit 2, nothing sent."""
    _, var, conf = node_files(tmp_path, listener.nova_conf_section())
    (var / 'compute_id').write_text(content)
    proc = run_cli('report', '--config-file', conf)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count('\n') == 1
    assert str(var / 'compute_id') in proc.stderr
    assert listener.requests == []


def test_a_misspelt_host_architecture_is_refused_and_the_trait_stays(
        placement, tmp_path, unique):
    """The armv7l node reports HW_ARCH_ARMV7 (nova-compute does not);
    host_architecture = armv7, a name Nova's architecture field refuses,
    is exit 2 with nothing sent, not a sync that drops the trait."""
    client = placement.client()
    name = 'arm-' + unique
    uuid = writes.create_resource_provider(client, name)['uuid']
    _, _, conf = node_files(tmp_path, placement.nova_conf_section(),
                            'host_architecture = armv7l\n')
    proc = run_cli('report', '--config-file', conf, '--provider', name)
    assert proc.returncode == 0, proc.stderr
    assert 'HW_ARCH_ARMV7' in client.get_provider_traits(uuid)[0]
    with open(conf) as f:
        text = f.read()
    for wrong in ('armv7', 'banana'):
        with open(conf, 'w') as f:
            f.write(text.replace('= armv7l', '= ' + wrong))
        before = len(placement.requests_seen())
        proc = run_cli('report', '--config-file', conf, '--provider', name)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count('\n') == 1
        assert "host_architecture: '%s'" % wrong in proc.stderr
        assert len(placement.requests_seen()) == before
    assert 'HW_ARCH_ARMV7' in client.get_provider_traits(uuid)[0]
