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

"""devstack/upgrade/ (the grenade plugin) read by grenade's own functions.

grenade comes from the unmodified snapshot in ``../shared/upstream``: its
``inc/upgrade`` registers the projects and its ``inc/plugin`` loads the
plugin's settings the way ``grenade.sh`` does, after grenade's own
projects (whose settings register them when their services are on).
"""

import os
import re
import subprocess

import pytest

from tests import helpers

REPO = helpers.REPO
SNAPSHOT = 'grenade-master-0a5e3bf3c3.tar.gz'

HARNESS = r'''
set -o errexit
declare -A PLUGIN_DIR GITDIR
source "$GRENADE/inc/upgrade"
source "$GRENADE/inc/plugin"
# The job writes both sides' local.conf (devstack_localrc only says so).
GRENADE_USE_EXTERNAL_DEVSTACK=True
# grenade's own projects, as their settings register them.
for project in keystone placement glance neutron nova; do
    UPGRADE_PROJECTS+=" $project"
    PLUGIN_DIR[$project]=$GRENADE/projects/$project
done
GITDIR[image-type-filter]=$PROJECT
source "$PROJECT/devstack/upgrade/settings"
echo "order:$UPGRADE_PROJECTS"
echo "filter:${PLUGIN_DIR[image-type-filter]}"
'''


@pytest.fixture
def grenade(tmp_path):
    return helpers.upstream_tree(tmp_path, SNAPSHOT)


def loaded(grenade):
    out = subprocess.run(['bash', '-c', HARNESS], capture_output=True,
                         text=True, timeout=60, check=True,
                         env=dict(os.environ, GRENADE=str(grenade),
                                  PROJECT=REPO)).stdout
    return dict(line.split(':', 1) for line in out.splitlines())


def test_one_project_upgraded_after_grenade_s_own(grenade):
    """grenade's convention: a plugin registers its project, which
    grenade upgrades after its own (nova's step first, then the filters'
    new release and the reporters)."""
    got = loaded(grenade)
    order = got['order'].split()
    assert order == ['keystone', 'placement', 'glance', 'neutron',
                     'nova', 'image-type-filter']
    assert got['filter'] == os.path.join(REPO, 'devstack', 'upgrade')


def test_every_step_has_its_scripts():
    """grenade runs upgrade.sh and shutdown.sh of the registered
    directory, resources.sh where there is one: each is executable."""
    for script in ('upgrade.sh', 'shutdown.sh', 'resources.sh'):
        path = os.path.join(REPO, 'devstack', 'upgrade', script)
        assert os.access(path, os.X_OK), path


def test_the_scripts_follow_grenade_s_conventions():
    """Each side's devstack by its own name (upgrade.sh the target's,
    shutdown.sh the base's), the upgrade script's abort trap, the
    resources kept in grenade's database, the enable_plugin lines for
    both sides."""
    upgrade = os.path.join(REPO, 'devstack', 'upgrade')

    def read(name):
        with open(os.path.join(upgrade, name)) as f:
            return f.read()
    assert '$TARGET_DEVSTACK_DIR/' in read('upgrade.sh')
    assert 'trap cleanup SIGHUP SIGINT SIGTERM' in read('upgrade.sh')
    assert '$BASE_DEVSTACK_DIR/' in read('shutdown.sh')
    for name in ('upgrade.sh', 'shutdown.sh'):
        assert '$TOP_DIR' not in read(name), name
    resources = read('resources.sh')
    assert 'resource_save' in resources and 'resource_get' in resources
    assert 'openstack user create' in resources
    assert not re.search(r'nova-fake\.conf-\d', resources)
    settings = read('settings')
    for side in ('base', 'target'):
        assert re.search(r'devstack_localrc %s enable_plugin '
                         r'image-type-filter' % side, settings), side


UPGRADE_DOC = os.path.join(REPO, 'doc', 'source', 'install', 'upgrade.rst')
#: What each grenade step is called in upgrade.rst (the job's projects:
#: cinder and swift are off).
STEP_TITLES = {
    'keystone': 'Upgrade Keystone',
    'placement': 'Upgrade Placement',
    'glance': 'Upgrade Glance',
    'neutron': 'Upgrade Neutron',
    'nova': 'Upgrade Nova',
    'image-type-filter': 'Upgrade image-type-filter',
}


def documented(name, path=UPGRADE_DOC):
    """The bold titles of the enumerated list after ``.. gate-steps:
    NAME`` in the page."""
    with open(path) as f:
        text = f.read()
    marker = '.. gate-steps: %s\n' % name
    assert marker in text, 'no %r list in %s' % (marker.strip(), path)
    items = []
    for line in text.split(marker, 1)[1].lstrip('\n').splitlines():
        if line.startswith('#. '):
            items.append(line[3:])
        elif line.startswith('   ') and items:
            items[-1] += ' ' + line.strip()
        elif line.strip() and items:
            break
    titles = []
    for item in items:
        bold = re.match(r'\*\*(.+?)\*\*', item)
        assert bold, 'a step without a bold title: %r' % item[:60]
        titles.append(' '.join(bold.group(1).split()).rstrip('.'))
    return titles


def test_upgrade_rst_gives_grenade_s_steps_in_grenade_s_order(grenade):
    order = loaded(grenade)['order'].split()
    assert documented('grenade') == ['Stop every service'] + [
        STEP_TITLES[project] for project in order]


def test_upgrade_rst_gives_the_rollback_and_removal_the_gate_runs():
    from gate_cloud import devstack_removal
    from gate_cloud import devstack_rollback
    assert documented('gate_cloud.devstack_rollback') == list(
        devstack_rollback.STEPS)
    assert documented('gate_cloud.devstack_removal') == list(
        devstack_removal.STEPS)
