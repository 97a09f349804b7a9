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

"""The release directory ``tools/build_release.py`` writes, used as the
install pages use it.

The tool runs with ``build`` from the package index (``tests/
deploy_tools.py``); what follows is offline: ``sha256sum -c`` checks the
checksum file, and the install guide's pip command (``doc/source/install/
index.rst``) installs the package from the directory alone in
hash-checking mode into a fresh virtualenv, and refuses a wheel that is
not the one built. The version is pbr's, from git: two clones of one
commit build byte-identical files, and a later commit builds a later
version, which the same command installs over the older one.
"""

import configparser
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from tests import deploy_tools
from tests import helpers

pytestmark = pytest.mark.slow

REPO = helpers.REPO


git = deploy_tools.git
version = deploy_tools.pbr_version


@pytest.fixture(scope='module')
def build_venv(tmp_path_factory):
    return deploy_tools.install('build', str(tmp_path_factory.mktemp('b')))


def build_in(venv, where, cwd):
    """tools/build_release.py of the clone at ``cwd`` into ``where``,
    run by ``venv``'s Python (with build)."""
    output = os.path.join(str(where), 'image-type-filter')
    proc = subprocess.run(
        [os.path.join(venv, 'bin', 'python'),
         os.path.join(cwd, 'tools', 'build_release.py'), '--output',
         output], capture_output=True, text=True,
        timeout=deploy_tools.PIP_TIMEOUT, env=deploy_tools.unguarded_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return output


def clone(where):
    """A clone of this checkout's commit, as another machine would make."""
    git('clone', '--quiet', '--no-hardlinks', REPO, str(where))
    return str(where)


@pytest.fixture(scope='module')
def release(tmp_path_factory):
    return deploy_tools.build_release(str(tmp_path_factory.mktemp('rel')))


#: Where the install guide has the operator copy the directory.
PAGE_RELEASE = '/srv/release/image-type-filter'


def page_install():
    """The install guide's hash-checked pip command, as argv."""
    with open(os.path.join(REPO, 'doc', 'source', 'install',
                           'index.rst')) as f:
        text = f.read().replace('\\\n', ' ')
    [line] = re.findall(r'^   # (pip install --require-hashes .*)$', text,
                        re.M)
    return shlex.split(line)


def hash_install(release, venv):
    """The install guide's command, into ``venv``."""
    argv = [word.replace(PAGE_RELEASE, release) for word in page_install()]
    assert argv[:2] == ['pip', 'install']
    return subprocess.run(
        [os.path.join(venv, 'bin', 'pip'), 'install', '-q',
         '--disable-pip-version-check'] + argv[2:],
        capture_output=True, text=True, timeout=600)


def test_the_directory_holds_the_product_alone(release):
    assert sorted(os.listdir(release)) == sorted([
        'SHA256SUMS', 'requirements.txt', 'dependencies.txt',
        'dependencies-cli.txt',
        'image_type_filter-%s-py3-none-any.whl' % version(),
        'image_type_filter-%s.tar.gz' % version()])
    # The tool checks it too: the demo distribution is not an operator's.
    assert not [n for n in os.listdir(release) if 'demo' in n]


def test_sha256sum_checks_both_files(release):
    proc = subprocess.run(['sha256sum', '-c', 'SHA256SUMS'], cwd=release,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(proc.stdout.splitlines()) == sorted(
        '%s: OK' % n for n in os.listdir(release)
        if n.startswith('image_type_filter-'))


def test_pip_installs_it_from_the_directory_in_hash_checking_mode(
        release, tmp_path):
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True,
                   timeout=300)
    proc = hash_install(release, str(venv))
    assert proc.returncode == 0, proc.stderr
    assert installed_version(venv) == version()


def test_pip_refuses_a_wheel_that_is_not_the_one_built(release, tmp_path):
    tampered = tmp_path / 'image-type-filter'
    shutil.copytree(release, tampered)
    [wheel] = tampered.glob('*.whl')
    with open(wheel, 'ab') as f:
        f.write(b'\0')  # still a zip file, but not the built one
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True,
                   timeout=300)
    proc = hash_install(str(tampered), str(venv))
    assert proc.returncode != 0
    assert 'DO NOT MATCH THE HASHES' in proc.stderr


def installed_version(venv):
    return subprocess.run(
        [str(venv / 'bin' / 'python'), '-I', '-c',
         'from importlib import metadata; '
         'print(metadata.version("image-type-filter"))'],
        capture_output=True, text=True, timeout=60).stdout.strip()


def test_two_clones_of_one_commit_build_the_same_bytes(build_venv,
                                                       tmp_path):
    first = build_in(build_venv, tmp_path / 'one',
                     clone(tmp_path / 'clone-one'))
    # Another clone, a moment later: other file times, another directory.
    second = build_in(build_venv, tmp_path / 'two',
                      clone(tmp_path / 'clone-two'))
    names = sorted(os.listdir(first))
    assert names == sorted(os.listdir(second))
    for name in names:
        with open(os.path.join(first, name), 'rb') as a, \
                open(os.path.join(second, name), 'rb') as b:
            assert a.read() == b.read(), name
    assert 'image_type_filter-%s.tar.gz' % version() in names


def test_a_later_commit_replaces_the_installed_build(build_venv, tmp_path):
    """The install guide's command, run with a later commit's release,
    replaces the build it installed before (each commit its version)."""
    older_source = clone(tmp_path / 'older')
    newer_source = clone(tmp_path / 'newer')
    git('-c', 'user.name=t', '-c', 'user.email=t@example.org', 'commit',
        '--quiet', '--allow-empty', '-m', 'a later commit',
        cwd=newer_source)
    assert version(newer_source) != version(older_source)
    older = build_in(build_venv, tmp_path / 'older-release', older_source)
    newer = build_in(build_venv, tmp_path / 'newer-release', newer_source)
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True,
                   timeout=300)
    for release, expected in ((older, version(older_source)),
                              (newer, version(newer_source))):
        proc = hash_install(release, str(venv))
        assert proc.returncode == 0, proc.stderr
        assert installed_version(venv) == expected


def test_the_dependency_files_are_what_setup_cfg_declares(release):
    parser = configparser.ConfigParser()
    parser.read(os.path.join(REPO, 'setup.cfg'))

    def declared(text):
        return [line.strip() for line in text.splitlines()
                if line.strip() and not line.strip().startswith('#')]

    def listed(name):
        with open(os.path.join(release, name)) as f:
            return [line.strip() for line in f
                    if line.strip() and not line.startswith('#')]
    base = declared(parser['options']['install_requires'])
    cli = declared(parser['options.extras_require']['cli'])
    assert listed('dependencies.txt') == base
    assert listed('dependencies-cli.txt') == base + cli
