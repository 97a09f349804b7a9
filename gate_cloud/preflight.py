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

"""The Debian packages the cloud's services need (``DEBIAN`` in each).

Installed by the command itself when missing; a failure is one line
naming the package and apt's log, and a non-zero exit. The virtualenvs
are ``series.py``'s.
"""

import subprocess

from gate_cloud import layout
from gate_cloud.processes import GateError

APT = ['apt-get', '-o', 'DPkg::Lock::Timeout=900']


def missing_debian_packages(packages):
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


def ensure_debian_packages(log, packages):
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
