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
nova-scheduler, nova-compute and nova-compute-ironic Dockerfiles with
``contrib/kolla/template-overrides.j2`` and a ``kolla-build.conf`` whose
``[<image>-additions-image-type-filter]`` sections name the release
directory ``tools/build_release.py`` wrote, as ``doc/source/install/
kolla-ansible.rst`` tells an operator to. What each image then
pip-installs is read from the rendered Dockerfile, word by word as the
shell splits it: the package from that directory alone, in pip's
hash-checking mode, never the name from an index. kolla's own build code
then archives each image's additions up to the container engine (which
this machine does not run), to show the directory lands where those
lines read it.
"""

import json
import os
import re
import shlex
import subprocess
import textwrap

import pytest

from tests import deploy_tools
from tests import helpers
from tests.repository import test_kolla_reporter

pytestmark = pytest.mark.slow

REPO = helpers.REPO
OVERRIDE = os.path.join(REPO, 'contrib', 'kolla', 'template-overrides.j2')
PAGE = os.path.join(REPO, 'doc', 'source', 'install', 'kolla-ansible.rst')
#: The image's own constraints: openstack-base puts the requirements
#: repository at /requirements and installs every library against them.
CONSTRAINTS = '/requirements/upper-constraints.txt'
#: kolla 23.0.0 builds 2026.2, 22.2.0 builds 2026.1 (the series of
#: kolla-ansible 22.2.0, the newest on the package index).
KOLLA_SERIES = ('2026.2', '2026.1')
#: kolla-build.conf's index options; kolla turns them into build ARGs.
MIRROR = 'https://pypi.mirror.example/simple'
#: Where kolla puts an additions source in the image: /additions/ and the
#: source directory's base name.
RELEASE = '/additions/image-type-filter'
#: The images that get the package, and the dependency list each installs.
IMAGES = {'nova-scheduler': 'dependencies-cli.txt',
          'nova-compute': 'dependencies-cli.txt',
          'nova-compute-ironic': 'dependencies-cli.txt'}


version = deploy_tools.pbr_version


def page_command():
    """The kolla-build command line of the page: its image arguments."""
    with open(PAGE) as f:
        [line] = [line for line in f
                  if line.strip().startswith('$ kolla-build ')]
    argv = shlex.split(line.strip()[2:])
    return argv


def page_build_conf():
    """The page's ``kolla-build.conf`` block (``code-block:: cfg``: not
    one of the nova.conf blocks test_config_blocks.py parses)."""
    with open(PAGE) as f:
        text = f.read()
    [body] = re.findall(
        r'^\.\. code-block:: cfg\n   :caption: kolla-build\.conf\n\n'
        r'((?:(?:   .*)?\n)+)', text, re.M)
    return textwrap.dedent(body)


@pytest.fixture(scope='module')
def release(tmp_path_factory):
    return deploy_tools.build_release(
        str(tmp_path_factory.mktemp('release')))


@pytest.fixture(scope='module', params=KOLLA_SERIES)
def rendered(request, tmp_path_factory, release):
    """{image: Dockerfile text} for nova-base, the three images and
    openstack-base, rendered with the override and the page's
    kolla-build.conf (its location the release built here)."""
    where = tmp_path_factory.mktemp('kolla-%s' % request.param)
    venv = deploy_tools.install(request.param, str(where))
    conf = where / 'kolla-build.conf'
    # Only this file: no /etc/kolla/kolla-build.conf of the machine's.
    sections = page_build_conf().replace(
        '/srv/release/image-type-filter', release)
    conf.write_text('[DEFAULT]\npip_extra_index_url = %s\n\n%s'
                    % (MIRROR, sections))
    work = where / 'work'
    argv = page_command()
    assert argv[:3] == ['kolla-build', '--template-override',
                        'template-overrides.j2']
    proc = subprocess.run(
        [os.path.join(venv, 'bin', 'kolla-build'), '--config-file',
         str(conf), '--template-only', '--work-dir', str(work),
         '--template-override', OVERRIDE] + argv[3:],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = {'built': sorted(os.listdir(work / 'docker' / 'nova'))}
    for image, folder in (('base', 'base'),
                          ('nova-base', 'nova/nova-base'),
                          ('nova-scheduler', 'nova/nova-scheduler'),
                          ('nova-compute', 'nova/nova-compute'),
                          ('nova-compute-ironic', 'nova/nova-compute-ironic'),
                          ('openstack-base', 'openstack-base')):
        with open(work / 'docker' / folder / 'Dockerfile') as f:
            found[image] = f.read()
    images = deploy_tools.kolla_images(venv)
    for name, path in (('extend_start', 'nova/nova-base/extend_start.sh'),
                       ('start', 'base/start.sh')):
        with open(os.path.join(images, path)) as f:
            found[name] = f.read()
    found['series'] = request.param
    found['venv'] = venv
    found['conf'] = str(conf)
    found['work'] = str(where / 'archives')
    return found


def pip_installs(dockerfile):
    """[argv] for every ``pip install`` of a Dockerfile's RUN
    instructions, continuation lines joined, split as sh splits."""
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
    """The pip commands that read the release directory."""
    return [argv for argv in pip_installs(dockerfile)
            if any(word.startswith(RELEASE) for word in argv)]


def runs_as_root(rendered, image, text):
    """Whether ``text`` of an image runs as root: the images it is built
    from switch user nowhere, and it comes before its own image's first
    USER line."""
    parents = ('base', 'openstack-base', 'nova-base')
    if any(re.search(r'^USER ', rendered[p], re.M) for p in parents):
        return False
    dockerfile = rendered[image]
    first_user = re.search(r'^USER ', dockerfile, re.M)
    return first_user is not None and dockerfile.index(text) < \
        first_user.start()


def test_the_page_names_exactly_the_three_images(rendered):
    """nova-compute alone as a pattern would match nova-compute-ironic
    too: the page anchors each name."""
    assert page_command()[3:] == ['^nova-scheduler$', '^nova-compute$',
                                  '^nova-compute-ironic$']
    assert rendered['built'] == ['nova-base', 'nova-compute',
                                 'nova-compute-ironic', 'nova-scheduler']


@pytest.mark.parametrize('image', sorted(IMAGES))
def test_each_image_installs_the_package_from_the_release_alone(
        rendered, image):
    dockerfile = rendered[image]
    assert 'ADD additions-archive /\n' in dockerfile
    [dependencies, package] = ours(dockerfile)
    # The dependencies, under their own names, against the image's
    # constraints (from the index or the mirror kolla-build.conf names).
    assert dependencies[dependencies.index('-c') + 1] == CONSTRAINTS
    assert dependencies[dependencies.index('-r') + 1] == \
        RELEASE + '/' + IMAGES[image]
    # The package: hash-checked, from the directory, no index.
    for option in ('--require-hashes', '--no-index', '--no-deps'):
        assert option in package, option
    assert package[package.index('--find-links') + 1] == RELEASE
    assert package[package.index('-r') + 1] == RELEASE + '/requirements.txt'
    # No pip command of the image names the package for an index.
    for argv in pip_installs(dockerfile):
        assert not [w for w in argv if re.match(r'image[-_]type[-_]filter',
                                                w)], argv
    assert dockerfile.index('ADD additions-archive /') < \
        dockerfile.index(RELEASE)
    assert runs_as_root(rendered, image, RELEASE + '/requirements.txt')


def test_the_release_holds_what_the_images_read(release):
    """The files the RUN lines name, in the directory kolla copies; the
    requirements file pins this version with the wheel's hash."""
    names = set(os.listdir(release))
    assert {'requirements.txt', 'dependencies.txt',
            'dependencies-cli.txt'} <= names
    assert os.path.basename(release) == os.path.basename(RELEASE)
    with open(os.path.join(release, 'requirements.txt')) as f:
        text = f.read()
    assert 'image-type-filter==%s \\\n' % version() in text
    assert text.count('--hash=sha256:') == 2


#: kolla's own build of the three images up to the container engine, which
#: this machine does not run: its sources and additions are archived as
#: kolla-build archives them, then the engine's first call stops the
#: build. Prints each image's additions archive, as JSON.
ARCHIVES = """
import json, os, sys, tarfile
from oslo_config import cfg
from kolla.common import config as common_config
from kolla.image import tasks
from kolla.image.kolla_worker import KollaWorker

conf = cfg.ConfigOpts()
common_config.parse(conf, sys.argv[1:], prog='kolla-build')
kolla = KollaWorker(conf)
kolla.setup_working_dir()
kolla.find_dockerfiles()
kolla.create_dockerfiles()
kolla.create_patch_files()
kolla.build_image_list()
kolla.find_parents()
kolla.filter_images()


class NoEngine:
    def __getattr__(self, name):
        raise RuntimeError('no container engine here')


found = {}
for image in kolla.images:
    if image.name not in %r:
        continue
    task = tasks.BuildTask(conf, image, None)
    task._ec = NoEngine()
    task.builder(image)
    with tarfile.open(os.path.join(image.path, 'additions-archive')) as t:
        found[image.name] = sorted(t.getnames())
print(json.dumps(found))
""" % (sorted(IMAGES),)


def test_kolla_puts_the_release_where_the_images_read_it(rendered,
                                                         release):
    """kolla's additions archive of each image (ADD additions-archive /)
    holds the release directory at /additions/image-type-filter/."""
    argv = [os.path.join(rendered['venv'], 'bin', 'python'), '-c',
            ARCHIVES, '--template-only', '--config-file', rendered['conf'],
            '--work-dir', rendered['work'], '--template-override',
            OVERRIDE] + page_command()[3:]
    if rendered['series'] == '2026.2':
        # kolla 23.0.0 would build with "docker buildx", a command.
        argv.insert(3, '--nobuildkit')
    proc = subprocess.run(argv, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    archives = json.loads(proc.stdout)
    expected = sorted(['additions', RELEASE.lstrip('/')] + [
        '%s/%s' % (RELEASE.lstrip('/'), name)
        for name in os.listdir(release)])
    assert archives == {image: expected for image in IMAGES}


def test_no_other_nova_image_gets_the_package(rendered):
    """The override fills the three images' own footer blocks, not
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
