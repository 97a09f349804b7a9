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

"""Check what the built wheels and sdists carry, as a package index would not.

``twine check`` reads the metadata; this reads the contents, of both
distributions built from this repository (told apart by file name):

* image-type-filter (the root): the wheel carries the three product
  packages only, the licence, the systemd unit, the example nova.conf and
  the sample-file generator inputs, and nothing of the demo, the embedded
  Placement, ``tests``, ``benchmarks`` or ``doc``; the sdist the whole
  source tree an OpenStack sdist carries (tests, docs, release notes, the
  demo's project included).
* image-type-filter-demo (``demo/``): the wheel carries ``image_type_demo``
  and ``placement_runner`` with the Placement patch the demo applies, and
  none of the product's packages; its sdist the same files, which the
  wheel is built from.

Run by ``.ci/run`` after ``python -m build``; one line per problem, exit 1
if any.
"""

import os
import sys
import tarfile
import zipfile

#: File-name prefix of each distribution's wheel and sdist, and its name.
PRODUCT = 'image_type_filter-'
DEMO = 'image_type_filter_demo-'
NAMES = {PRODUCT: 'image-type-filter', DEMO: 'image-type-filter-demo'}
PRODUCT_PACKAGES = ('image_type_common', 'image_type_filter',
                    'virt_capabilities')
DEMO_PACKAGES = ('image_type_demo', 'placement_runner')
PATCH = 'placement_runner/patches/root-required-prefilter.patch'
HARNESS = ('tests/', 'benchmarks/', 'doc/', 'releasenotes/')
WHEELS = {
    PRODUCT: {
        'packages': PRODUCT_PACKAGES,
        'must_have': (
            'image_type_filter/nova/__init__.py',
            'virt_capabilities/cmd/main.py',
            '.dist-info/licenses/LICENSE',
            '.data/data/share/image-type-filter/systemd/'
            'virt-capabilities.service',
            '.data/data/share/image-type-filter/examples/'
            'nova-libvirt-ceph.conf',
            '.data/data/share/image-type-filter/oslo-config-generator/'
            'image-type-filter.conf',
            '.data/data/share/image-type-filter/oslo-config-generator/'
            'virt-capabilities.conf',
        ),
        'must_not_have': HARNESS + tuple(p + '/' for p in DEMO_PACKAGES),
    },
    DEMO: {
        'packages': DEMO_PACKAGES,
        'must_have': (PATCH, 'image_type_demo/cmd.py',
                      '.dist-info/licenses/LICENSE'),
        'must_not_have': HARNESS + tuple(p + '/' for p in PRODUCT_PACKAGES),
    },
}
SDISTS = {
    PRODUCT: ('LICENSE', 'README.md', 'setup.cfg', 'tox.ini',
              'doc/source/conf.py', 'doc/requirements.txt',
              'releasenotes/notes/', 'tests/unit/', 'tests/repository/',
              'etc/systemd/',
              'contrib/placement/root-required-prefilter.patch',
              'devstack/plugin.sh', 'tools/add_license_header.py',
              'demo/pyproject.toml', 'demo/image_type_demo/cmd.py',
              'image_type_demo/cmd.py', PATCH),
    DEMO: ('LICENSE', 'README.md', 'pyproject.toml',
           'image_type_demo/cmd.py', PATCH),
}


def kind(path):
    """Which distribution a wheel or sdist file is, by its name."""
    name = os.path.basename(path)
    for prefix in (DEMO, PRODUCT):  # the demo's name starts like the other
        if name.startswith(prefix):
            return prefix
    return None


def problems_of_wheel(which, names):
    expected = WHEELS[which]
    for wanted in expected['must_have']:
        if not any(name.endswith(wanted) for name in names):
            yield 'the %s wheel lacks %s' % (NAMES[which], wanted)
    for package in expected['packages']:
        if package + '/__init__.py' not in names:
            yield 'the %s wheel lacks the package %s' % (NAMES[which],
                                                         package)
    for name in names:
        if name.startswith(expected['must_not_have']):
            yield 'the %s wheel carries %s' % (NAMES[which], name)


def problems_of_sdist(which, names):
    # Every member is under one top directory, <name>-<version>/.
    inside = {name.partition('/')[2] for name in names}
    for wanted in SDISTS[which]:
        if not any(name.startswith(wanted) for name in inside):
            yield 'the %s sdist lacks %s' % (NAMES[which], wanted)


def main(paths):
    problems = []
    seen = set()
    for path in paths:
        which = kind(path)
        if which is None:
            problems.append('%s is neither distribution' % path)
        elif path.endswith('.whl'):
            seen.add((which, 'wheel'))
            with zipfile.ZipFile(path) as wheel:
                problems += problems_of_wheel(which, wheel.namelist())
        elif path.endswith('.tar.gz'):
            seen.add((which, 'sdist'))
            with tarfile.open(path) as sdist:
                problems += problems_of_sdist(which, sdist.getnames())
        else:
            problems.append('%s is neither a wheel nor an sdist' % path)
    for which in (PRODUCT, DEMO):
        for form in ('wheel', 'sdist'):
            if (which, form) not in seen:
                problems.append('no %s %s given' % (NAMES[which], form))
    for problem in problems:
        print(problem, file=sys.stderr)
    if not paths:
        print('usage: check_dist.py DIST...', file=sys.stderr)
        return 2
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
