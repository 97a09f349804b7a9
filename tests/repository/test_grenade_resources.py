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

"""devstack/upgrade/resources.sh's verdicts on a cloud that went wrong.

The grenade job shows the script passing on a real upgrade; a real cloud
does not lose a trait or misplace a boot on demand. Here grenade's own
``grenaderc`` and ``functions`` (the snapshots) run the script against a
stand-in ``openstack`` command on ``PATH`` that answers from files: what
Placement and Nova would say after the filters lost a trait or sent a raw
boot to a host that cannot boot raw.
"""

import os
import subprocess

import pytest

from tests import helpers

REPO = helpers.REPO
SNAPSHOTS = ('grenade-master-0a5e3bf3c3.tar.gz',
             'devstack-master-493835a61a.tar.gz')
SCRIPT = os.path.join(REPO, 'devstack', 'upgrade', 'resources.sh')
UUID = '42267382-f2b2-4bb7-bd8a-e6dcf42891b7'
RAW_HOST_TRAITS = 'COMPUTE_IMAGE_TYPE_RAW COMPUTE_NODE CUSTOM_IMAGE_TYPE_GATE'

#: The stand-in: providers and servers as files under $CLOUD.
OPENSTACK = r'''#!/bin/bash
args="$*"
case "$args" in
    "hypervisor list"*) cat "$CLOUD/hypervisors" ;;
    "resource provider list --name "*)
        set -- $args; cat "$CLOUD/provider-$5" ;;
    *"resource provider trait list "*)
        set -- $args; tr ' ' '\n' < "$CLOUD/traits-$7" ;;
    "server show "*" -c status") set -- $args; cat "$CLOUD/server-$3-status" ;;
    "server show "*" -c OS-EXT-SRV-ATTR:hypervisor_hostname")
        set -- $args; cat "$CLOUD/server-$3-host" ;;
    "server show "*" -c fault") set -- $args; cat "$CLOUD/server-$3-fault" ;;
    "server create "*)
        set -- $args; name=$9; echo "$name"  # its name as its id
        case "$name" in
            *qcow2*) echo ERROR > "$CLOUD/server-$name-status"
                     echo "No compute host boots qcow2 images" \
                         > "$CLOUD/server-$name-fault" ;;
            *) echo ACTIVE > "$CLOUD/server-$name-status"
               cat "$CLOUD/lands-on" > "$CLOUD/server-$name-host" ;;
        esac ;;
    "server delete "*) ;;
    *) echo "openstack stand-in: unexpected: $args" >&2; exit 2 ;;
esac
'''


@pytest.fixture
def world(tmp_path):
    trees = {name.split('-', 1)[0]: helpers.upstream_tree(
        tmp_path / name.split('-', 1)[0], name) for name in SNAPSHOTS}
    cloud = tmp_path / 'cloud'
    cloud.mkdir()
    (cloud / 'hypervisors').write_text('node1\n')
    (cloud / 'provider-node1').write_text(UUID + '\n')
    (cloud / 'provider-node2').write_text('other-uuid\n')
    (cloud / ('traits-' + UUID)).write_text(RAW_HOST_TRAITS)
    (cloud / 'traits-other-uuid').write_text('COMPUTE_NODE')
    (cloud / 'lands-on').write_text('node1\n')
    for what, text in (('status', 'ACTIVE'), ('host', 'node1')):
        (cloud / ('server-image-type-grenade-raw-' + what)).write_text(text)
    save = tmp_path / 'save'
    save.mkdir()
    (save / 'grenade_db.ini').write_text(
        '[image-type-filter]\nraw_host = node1\nqcow2_hosts = 0\n'
        'server_image-type-grenade-raw = image-type-grenade-raw\n'
        'providers = %s\ntraits_%s = %s\n' % (UUID, UUID, RAW_HOST_TRAITS))
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    (bindir / 'openstack').write_text(OPENSTACK)
    (bindir / 'openstack').chmod(0o755)
    top = tmp_path / 'top'
    top.mkdir()
    (top / 'openrc').write_text('# the admin credentials, not needed\n')
    env = dict(os.environ, PATH='%s:%s' % (bindir, os.environ['PATH']),
               CLOUD=str(cloud), GRENADE_DIR=str(trees['grenade']),
               TOP_DIR=str(top), STACK_ROOT=str(tmp_path),
               TARGET_DEVSTACK_DIR=str(trees['devstack']),
               BOOT_DEADLINE='10')
    return cloud, env


def verify(env, side):
    return subprocess.run(['bash', SCRIPT, 'verify', side], env=env,
                          capture_output=True, text=True, timeout=120)


def test_an_upgrade_that_kept_everything_passes(world):
    _, env = world
    for side in ('pre-upgrade', 'post-upgrade'):
        proc = verify(env, side)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
        assert 'resources %s: traits lost: 0' % side in proc.stdout


def test_a_lost_trait_fails_the_verify_naming_it(world):
    cloud, env = world
    (cloud / ('traits-' + UUID)).write_text(
        'COMPUTE_IMAGE_TYPE_RAW COMPUTE_NODE')
    proc = verify(env, 'post-upgrade')
    assert proc.returncode != 0
    assert 'lost CUSTOM_IMAGE_TYPE_GATE (post-upgrade)' in proc.stdout
    assert 'traits lost: 1' in proc.stdout


def test_a_raw_boot_on_a_host_that_cannot_boot_raw_fails(world):
    cloud, env = world
    (cloud / 'lands-on').write_text('node2\n')
    proc = verify(env, 'post-upgrade')
    assert proc.returncode != 0
    assert ('went to node2, whose provider other-uuid does not carry '
            'COMPUTE_IMAGE_TYPE_RAW') in proc.stdout + proc.stderr
