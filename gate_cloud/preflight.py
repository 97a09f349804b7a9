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

"""What the cloud needs before it starts: Debian packages and its virtualenv.

Installed by the command itself when missing; a failure is one line
naming the package (or pip's log) and a non-zero exit.
"""

import hashlib
import pathlib
import shutil
import subprocess

from gate_cloud import layout
from gate_cloud.processes import GateError

APT = ['apt-get', '-o', 'DPkg::Lock::Timeout=900']


def missing_debian_packages(packages=layout.DEBIAN_PACKAGES):
    missing = []
    for pkg in packages:
        try:
            out = subprocess.run(
                ['dpkg-query', '-W', '-f=${Status}', pkg],
                capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            out = ''
        if 'install ok installed' not in out:
            missing.append(pkg)
    return missing


def ensure_debian_packages(log, packages=layout.DEBIAN_PACKAGES):
    missing = missing_debian_packages(packages)
    if not missing:
        return
    log('apt-get install %s' % ' '.join(missing))
    layout.STATE.mkdir(mode=0o700, exist_ok=True)
    apt_log = layout.path('apt.log')
    env = {'DEBIAN_FRONTEND': 'noninteractive',
           'PATH': '/usr/sbin:/usr/bin:/sbin:/bin'}
    with open(apt_log, 'ab') as out:
        subprocess.run(APT + ['update', '-q'], stdout=out, stderr=out,
                       env=env, timeout=1800)
        proc = subprocess.run(
            APT + ['install', '-y', '-q', '--no-install-recommends']
            + missing, stdout=out, stderr=out, env=env, timeout=1800)
    if proc.returncode:
        still = missing_debian_packages(missing)
        raise GateError('cannot install Debian package(s) %s (apt-get exit '
                        '%d); see %s' % (' '.join(still or missing),
                                         proc.returncode, apt_log))


def requirements():
    reqs = list(layout.PYPI_PACKAGES) + ['-e', str(layout.REPO)]
    if (layout.REPO / 'contrib' / 'tempest' / 'setup.cfg').exists() or \
            (layout.REPO / 'contrib' / 'tempest' / 'pyproject.toml').exists():
        reqs += ['-e', str(layout.REPO / 'contrib' / 'tempest')]
    return reqs


def _stamp(reqs):
    digest = hashlib.sha256()
    for part in reqs:
        digest.update(part.encode() + b'\0')
    for name in ('setup.cfg', 'contrib/tempest/setup.cfg'):
        f = layout.REPO / name
        if f.exists():
            digest.update(f.read_bytes())
    return digest.hexdigest()


def ensure_venv(log):
    """``.venv-cloud`` with everything the cloud runs; rebuilt only when
    what it should hold changed."""
    reqs = requirements()
    stamp_file = layout.path('venv.stamp')
    want = _stamp(reqs)
    if stamp_file.exists() and stamp_file.read_text() == want and \
            (layout.VENV / 'bin' / 'nova-compute').exists():
        return
    layout.STATE.mkdir(mode=0o700, exist_ok=True)
    pip_log = layout.path('pip.log')
    log('pip install into %s (a few minutes)' % layout.VENV)
    with open(pip_log, 'ab') as out:
        if not (layout.VENV / 'bin' / 'pip').exists():
            proc = subprocess.run(['python3', '-m', 'venv', str(layout.VENV)],
                                  stdout=out, stderr=out, timeout=600)
            if proc.returncode:
                raise GateError('cannot create %s; see %s'
                                % (layout.VENV, pip_log))
        proc = subprocess.run(
            [str(layout.VENV / 'bin' / 'pip'), 'install', '-q'] + reqs,
            stdout=out, stderr=out, timeout=3600,
            env={'PATH': '/usr/bin:/bin', 'TMPDIR': str(layout.STATE),
                 'HOME': str(pathlib.Path.home())})
    if proc.returncode:
        raise GateError('pip install into %s failed (exit %d); see %s'
                        % (layout.VENV, proc.returncode, pip_log))
    stamp_file.write_text(want)


def venv_file(relative):
    """A data file pip installed into the virtualenv (e.g. api-paste.ini)."""
    for base in (layout.VENV, layout.VENV / 'local'):
        if (base / relative).exists():
            return base / relative
    found = list(layout.VENV.glob('lib/python*/site-packages/**/'
                                  + pathlib.Path(relative).name))
    if found:
        return found[0]
    raise GateError('%s not found in %s' % (relative, layout.VENV))


def which(name):
    return shutil.which(name)
