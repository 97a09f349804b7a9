#!/usr/bin/env python3
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

"""Check what the built wheel and sdist carry, as a package index would not.

``twine check`` reads the metadata; this reads the contents. The wheel must
carry every package setup.cfg lists, the Placement patch the demo applies
(``placement_runner/patches``), the licence, the systemd unit, the example
nova.conf and the sample-file generator inputs, and nothing of ``tests``,
``benchmarks`` or ``doc``. The sdist must carry the whole source tree an
OpenStack sdist carries (tests, docs, release notes included). Run by
``.ci/run`` after ``python -m build``; one line per problem, exit 1 if any.
"""

import sys
import tarfile
import zipfile

PACKAGES = ('image_type_common', 'image_type_filter', 'virt_capabilities',
            'placement_runner', 'image_type_demo')
WHEEL_MUST_HAVE = (
    'placement_runner/patches/root-required-prefilter.patch',
    'image_type_filter/nova/__init__.py',
    'virt_capabilities/cmd/main.py',
    '.dist-info/licenses/LICENSE',
    '.data/data/share/image-type-filter/systemd/virt-capabilities.service',
    '.data/data/share/image-type-filter/examples/nova-libvirt-ceph.conf',
    '.data/data/share/image-type-filter/oslo-config-generator/'
    'image-type-filter.conf',
    '.data/data/share/image-type-filter/oslo-config-generator/'
    'virt-capabilities.conf',
)
WHEEL_MUST_NOT_HAVE = ('tests/', 'benchmarks/', 'doc/', 'releasenotes/')
SDIST_MUST_HAVE = ('LICENSE', 'README.md', 'setup.cfg', 'tox.ini',
                   'doc/source/conf.py', 'doc/requirements.txt',
                   'releasenotes/notes/', 'tests/unit/', 'etc/systemd/',
                   'contrib/placement/root-required-prefilter.patch',
                   'devstack/plugin.sh', 'tools/add_license_header.py')


def problems_of_wheel(names):
    for wanted in WHEEL_MUST_HAVE:
        if not any(name.endswith(wanted) for name in names):
            yield 'the wheel lacks %s' % wanted
    for package in PACKAGES:
        if package + '/__init__.py' not in names:
            yield 'the wheel lacks the package %s' % package
    for name in names:
        if name.startswith(WHEEL_MUST_NOT_HAVE):
            yield 'the wheel carries %s' % name


def problems_of_sdist(names):
    # Every member is under one top directory, <name>-<version>/.
    inside = {name.partition('/')[2] for name in names}
    for wanted in SDIST_MUST_HAVE:
        if not any(name.startswith(wanted) for name in inside):
            yield 'the sdist lacks %s' % wanted


def main(paths):
    problems = []
    for path in paths:
        if path.endswith('.whl'):
            with zipfile.ZipFile(path) as wheel:
                problems += problems_of_wheel(wheel.namelist())
        elif path.endswith('.tar.gz'):
            with tarfile.open(path) as sdist:
                problems += problems_of_sdist(sdist.getnames())
        else:
            problems.append('%s is neither a wheel nor an sdist' % path)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not paths:
        print('usage: check_dist.py DIST...', file=sys.stderr)
        return 2
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
