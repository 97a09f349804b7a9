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

"""kolla's images with the documented override, rendered by kolla itself.

``kolla-build --template-only`` (kolla from the package index, in a
virtualenv of its own per series: ``tests/deploy_tools.py``) renders the
nova-scheduler and nova-compute Dockerfiles with
``contrib/kolla/template-overrides.j2``, as ``doc/source/install/
kolla-ansible.rst`` tells an operator to. What each image then pip-installs
is read from the rendered Dockerfile, word by word as the shell splits it.
"""

import configparser
import os
import re
import shlex
import subprocess

from packaging.requirements import Requirement
import pytest

from tests import deploy_tools
from tests import helpers
from tests.repository import test_kolla_reporter

pytestmark = pytest.mark.slow

REPO = helpers.REPO
OVERRIDE = os.path.join(REPO, 'contrib', 'kolla', 'template-overrides.j2')
#: The image's own constraints: openstack-base puts the requirements
#: repository at /requirements and installs every library against them.
CONSTRAINTS = '/requirements/upper-constraints.txt'
#: kolla 23.0.0 builds 2026.2, 22.2.0 builds 2026.1 (the series of
#: kolla-ansible 22.2.0, the newest on the package index).
KOLLA_SERIES = ('2026.2', '2026.1')
#: kolla-build.conf's index options; kolla turns them into build ARGs.
MIRROR = 'https://pypi.mirror.example/simple'


def version():
    parser = configparser.ConfigParser()
    parser.read(os.path.join(REPO, 'setup.cfg'))
    return parser['metadata']['version']


@pytest.fixture(scope='module', params=KOLLA_SERIES)
def rendered(request, tmp_path_factory):
    """{image: Dockerfile text} for nova-base, nova-scheduler,
    nova-compute and openstack-base, rendered with the override."""
    where = tmp_path_factory.mktemp('kolla-%s' % request.param)
    venv = deploy_tools.install(request.param, str(where))
    conf = where / 'kolla-build.conf'
    # Only this file: no /etc/kolla/kolla-build.conf of the machine's.
    conf.write_text('[DEFAULT]\npip_extra_index_url = %s\n' % MIRROR)
    work = where / 'work'
    proc = subprocess.run(
        [os.path.join(venv, 'bin', 'kolla-build'), '--config-file',
         str(conf), '--template-only', '--work-dir', str(work),
         '--template-override', OVERRIDE,
         '^nova-scheduler$', '^nova-compute$'],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = {}
    for image, folder in (('base', 'base'),
                          ('nova-base', 'nova/nova-base'),
                          ('nova-scheduler', 'nova/nova-scheduler'),
                          ('nova-compute', 'nova/nova-compute'),
                          ('openstack-base', 'openstack-base')):
        with open(work / 'docker' / folder / 'Dockerfile') as f:
            found[image] = f.read()
    images = deploy_tools.kolla_images(venv)
    for name, path in (('extend_start', 'nova/nova-base/extend_start.sh'),
                       ('start', 'base/start.sh')):
        with open(os.path.join(images, path)) as f:
            found[name] = f.read()
    found['series'] = request.param
    return found


def pip_installs(dockerfile):
    """[(requirements, argv)] for every ``pip install`` of a Dockerfile's
    RUN instructions, continuation lines joined, split as sh splits."""
    text = dockerfile.replace('\\\n', ' ')
    found = []
    for line in text.splitlines():
        if not line.startswith('RUN '):
            continue
        for command in line[4:].split('&&'):
            argv = shlex.split(command)
            if argv[:4] == ['python3', '-m', 'pip', '--no-cache-dir'] and \
                    'install' in argv:
                found.append(argv)
    return found


def ours(dockerfile):
    """The pip commands that install image-type-filter, with its
    requirement as pip reads it."""
    found = []
    for argv in pip_installs(dockerfile):
        for word in argv:
            if word.startswith('image-type-filter') or \
                    word.startswith('image_type_filter'):
                found.append((argv, Requirement(word)))
    return found


def runs_as_root(rendered, image, requirement):
    """Whether the install of ``requirement`` runs as root: the images it
    is built from switch user nowhere, and it comes before its own
    image's first USER line."""
    parents = ('base', 'openstack-base', 'nova-base')
    if any(re.search(r'^USER ', rendered[p], re.M) for p in parents):
        return False
    text = rendered[image]
    first_user = re.search(r'^USER ', text, re.M)
    return first_user is not None and text.index(
        str(requirement)) < first_user.start()


def test_the_scheduler_image_gets_the_filters_and_nothing_more(rendered):
    [(argv, requirement)] = ours(rendered['nova-scheduler'])
    assert requirement.name == 'image-type-filter'
    assert requirement.extras == set()  # not the [cli] extra
    assert str(requirement.specifier) == '==' + version()
    assert argv[argv.index('-c') + 1] == CONSTRAINTS
    assert argv[-1] == str(requirement)  # alone on its command line
    assert runs_as_root(rendered, 'nova-scheduler', requirement)


def test_the_compute_image_gets_the_reporter_with_its_command_line(
        rendered):
    [(argv, requirement)] = ours(rendered['nova-compute'])
    assert requirement.name == 'image-type-filter'
    assert requirement.extras == {'cli'}
    assert str(requirement.specifier) == '==' + version()
    assert argv[argv.index('-c') + 1] == CONSTRAINTS
    assert argv[-1] == str(requirement)
    assert runs_as_root(rendered, 'nova-compute', requirement)


def test_no_other_nova_image_gets_the_package(rendered):
    """The override fills the two images' own footer blocks, not
    nova-base's (every nova image is built from it)."""
    assert ours(rendered['nova-base']) == []
    assert 'image-type-filter' not in rendered['nova-base']


def test_the_constraints_are_the_ones_the_image_installs_with(rendered):
    """openstack-base installs every OpenStack library against the same
    file: the versions ours may move are those kolla chose."""
    assert any(argv[argv.index('-c') + 1] == CONSTRAINTS
               for argv in pip_installs(rendered['openstack-base'])
               if '-c' in argv)


def test_a_mirror_reaches_the_build_from_kolla_23_on(rendered):
    """kolla-build.conf's pip_extra_index_url (kolla 23.0.0, 2026.2)
    reaches both images as a build argument, so a mirror that serves the
    package is used; kolla 22.2.0 (2026.1) has no such option."""
    for image in ('nova-scheduler', 'nova-compute'):
        lines = rendered[image].splitlines()
        assert ('ARG PIP_EXTRA_INDEX_URL' in lines) == (
            rendered['series'] == '2026.2')


def test_the_start_script_makes_novas_log_directory(rendered):
    """What the reporter's container relies on (``EXTEND_START_DIRS`` of
    test_kolla_reporter.py): kolla's start script sources
    kolla_extend_start, which nova-base's is, and it creates the log
    directory before the command runs."""
    assert re.search(r'^\s*\. kolla_extend_start$', rendered['start'], re.M)
    assert rendered['start'].index('. kolla_extend_start') < \
        rendered['start'].index('exec ${CMD}')
    assert 'COPY extend_start.sh /usr/local/bin/kolla_extend_start' in \
        rendered['nova-base']
    for path in test_kolla_reporter.EXTEND_START_DIRS:
        assert re.search(r'^\s*mkdir -p %s$' % re.escape(path),
                         rendered['extend_start'], re.M), path
