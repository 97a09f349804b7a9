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
# grenade's own projects, as their settings register them.
for project in keystone placement glance neutron nova; do
    UPGRADE_PROJECTS+=" $project"
    PLUGIN_DIR[$project]=$GRENADE/projects/$project
done
GITDIR[image-type-filter]=$PROJECT
source "$PROJECT/devstack/upgrade/settings"
echo "order:$UPGRADE_PROJECTS"
echo "filter:${PLUGIN_DIR[image-type-filter]}"
echo "reporter:${PLUGIN_DIR[image-type-reporter]}"
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


def test_filters_upgrade_before_nova_and_reporters_after(grenade):
    """upgrade.rst's order: the filters' package is in the new release's
    virtualenv before nova's step starts nova-scheduler from it; the
    reporters start again after nova-compute."""
    got = loaded(grenade)
    order = got['order'].split()
    assert order == ['keystone', 'placement', 'glance', 'neutron',
                     'image-type-filter', 'nova', 'image-type-reporter']
    assert got['filter'] == os.path.join(REPO, 'devstack', 'upgrade')
    assert got['reporter'] == os.path.join(REPO, 'devstack', 'upgrade',
                                           'reporter')


def test_every_step_has_its_scripts():
    """grenade runs upgrade.sh and shutdown.sh of each registered
    directory, resources.sh where there is one: each is executable."""
    for step in ('', 'reporter'):
        for script in ('upgrade.sh', 'shutdown.sh'):
            path = os.path.join(REPO, 'devstack', 'upgrade', step, script)
            assert os.access(path, os.X_OK), path
    assert os.access(os.path.join(REPO, 'devstack', 'upgrade',
                                  'resources.sh'), os.X_OK)


UPGRADE_DOC = os.path.join(REPO, 'doc', 'source', 'install', 'upgrade.rst')
#: What each grenade step is called in upgrade.rst (the job's projects:
#: cinder and swift are off).
STEP_TITLES = {
    'keystone': 'Upgrade Keystone',
    'placement': 'Upgrade Placement',
    'glance': 'Upgrade Glance',
    'neutron': 'Upgrade Neutron',
    'image-type-filter': "Install the new release of the filters into "
                         "nova-scheduler's environment",
    'nova': 'Upgrade Nova',
    'image-type-reporter': 'Start the reporters from the new release',
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
