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

"""The real deployment tools, from the package index, for the recipe tests.

Each OpenStack series gets a virtualenv of its own with the tools of that
series: kolla (which renders image Dockerfiles with ``kolla-build
--template-only``, no container engine; it imports the ``docker`` library)
and, for 2026.1, kolla-ansible (for its ``merge_configs`` action plugin and
its roles' files) with the two libraries that plugin imports, ansible-core
and oslo.config (kolla-ansible's other requirements serve commands these
tests do not run). OpenStack-Ansible's os_nova role is not on the package
index, but the plugin it writes nova.conf with is: ansible-config-template
2.1.1, whose action plugin predates ansible-core 2.19 (it fails to load
there), with ansible-core 2.18. ``build`` builds the release directory
the recipes install from (``tools/build_release.py``). They are installed
once per test session and worker.

Installing reaches the package index, which README's test command must not
(``tests/network_guard.py``): the tests that use these are in the ``slow``
tier, and pip alone runs without the guard. What the tools themselves do
(rendering, merging) stays guarded: it must work offline.
"""

import configparser
import os
import subprocess
import sys

#: The newest release of each series on the package index (and the
#: OpenStack-Ansible plugin), and what its virtualenv holds: (pip install
#: arguments, pip install --no-deps ones).
SERIES = {
    '2026.2': (['kolla==23.0.0', 'docker'], []),
    '2026.1': (['kolla==22.2.0', 'docker',
                # kolla-ansible 22.2.0's own pins for the two libraries
                # its merge_configs plugin imports.
                'ansible-core>=2.19,!=2.19.0,<2.21', 'oslo.config>=5.2.0'],
               ['kolla-ansible==22.2.0']),
    'openstack-ansible': (['ansible-core>=2.17,<2.19'],
                          ['ansible-config-template==2.1.1']),
    # tools/build_release.py's one requirement.
    'build': (['build>=1.0'], []),
}
_GUARD_SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           'network_guard_site')
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIP_TIMEOUT = 900


def git(*args, cwd=REPO):
    return subprocess.run(['git', *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=True).stdout.strip()


def pbr_version(cwd=REPO):
    """The version pbr builds of the commit checked out at ``cwd``:
    setup.cfg's, then .devN, N the commits since the first (no tag yet:
    a tag would be the version)."""
    assert git('tag', '--list', cwd=cwd) == '', 'a tag: pbr takes it'
    parser = configparser.ConfigParser()
    parser.read(os.path.join(cwd, 'setup.cfg'))
    return '%s.dev%d' % (parser['metadata']['version'],
                         int(git('rev-list', '--count', 'HEAD', cwd=cwd))
                         - 1)


def unguarded_env():
    """The environment without the network guard on PYTHONPATH."""
    env = dict(os.environ)
    path = [p for p in env.get('PYTHONPATH', '').split(os.pathsep)
            if p and os.path.abspath(p) != _GUARD_SITE]
    if path:
        env['PYTHONPATH'] = os.pathsep.join(path)
    else:
        env.pop('PYTHONPATH', None)
    return env


def install(series, where):
    """A virtualenv at ``where`` with ``series``' tools; returns its path."""
    with_deps, without_deps = SERIES[series]
    venv = os.path.join(where, 'venv-%s' % series)
    subprocess.run([sys.executable, '-m', 'venv', venv], check=True,
                   timeout=PIP_TIMEOUT)
    pip = [os.path.join(venv, 'bin', 'pip'), 'install', '-q',
           '--disable-pip-version-check']
    for args in (with_deps, ['--no-deps'] + without_deps if without_deps
                 else None):
        if args is None:
            continue
        proc = subprocess.run(pip + args, capture_output=True, text=True,
                              timeout=PIP_TIMEOUT, env=unguarded_env())
        assert proc.returncode == 0, (
            'pip could not install %s from the package index:\n%s'
            % (' '.join(args), proc.stderr[-3000:]))
    return venv


def build_release(where):
    """The release directory ``tools/build_release.py`` writes, built by
    a virtualenv with ``build`` (setuptools is fetched by the build, as
    ``pyproject.toml`` says); returns its path, named as the kolla recipe
    looks for it."""
    venv = install('build', where)
    output = os.path.join(where, 'image-type-filter')
    proc = subprocess.run(
        [os.path.join(venv, 'bin', 'python'),
         os.path.join(REPO, 'tools', 'build_release.py'), '--output',
         output], capture_output=True, text=True, timeout=PIP_TIMEOUT,
        env=unguarded_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return output


def share(venv, *parts):
    """A path under the virtualenv's data files (kolla-ansible's roles and
    plugins are installed under share/kolla-ansible/ansible)."""
    return os.path.join(venv, 'share', *parts)


def kolla_images(venv):
    """kolla's image sources (``docker/``): data files under share/kolla
    up to 22.x, inside the package from 23.0.0 on."""
    lib = os.path.join(venv, 'lib')
    [python] = [d for d in os.listdir(lib) if d.startswith('python')]
    found = [path for path in (share(venv, 'kolla', 'docker'),
                               os.path.join(lib, python, 'site-packages',
                                            'kolla', 'docker'))
             if os.path.isdir(os.path.join(path, 'base'))]
    assert len(found) == 1, found
    return found[0]
