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

"""Every third-party module the project imports is declared in setup.cfg:
in install_requires, or in the extra of the package that needs it."""

import configparser
from importlib import metadata
import os
import re
import sys

from tests.unit import test_layout as layout

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OURS = {'image_type_common', 'image_type_filter', 'virt_capabilities',
        'placement_runner', 'image_type_demo', 'benchmarks', 'tests'}
#: Which extras a package may lean on beyond install_requires.
EXTRAS_BY_PACKAGE = {
    'placement_runner': ('embedded', 'scale'),
    'image_type_demo': ('embedded',),
    'benchmarks': ('bench',),
}
#: Provided by the program that loads us: nova-scheduler runs
#: image_type_filter.nova, and Placement's own package is the server.
HOST_PROVIDED = {'image_type_filter.nova': {'nova'}}


def requirement_names(text):
    names = set()
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip()
        if line:
            names.add(canonical(re.split(r'[<>=!~\[; ]', line, maxsplit=1)[0]))
    return names


def canonical(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def declared():
    setup = configparser.ConfigParser()
    setup.read(os.path.join(REPO, 'setup.cfg'))
    core = requirement_names(setup['options']['install_requires'])
    extras = {name: requirement_names(value) for name, value in
              setup['options.extras_require'].items()}
    return core, extras


def third_party_imports(package):
    """(module, top-level name) of every import outside this project and
    the standard library, from the same reading the layout test does."""
    for module, imported in layout.package_modules():
        if module.split('.')[0] != package:
            continue
        for name in imported:
            top = name.split('.')[0]
            if top not in OURS and top not in sys.stdlib_module_names:
                yield module, top


def test_every_import_is_declared():
    core, extras = declared()
    distributions = metadata.packages_distributions()
    missing = []
    for package in sorted(OURS - {'tests'}):
        allowed = set(core)
        for extra in EXTRAS_BY_PACKAGE.get(package, ()):
            allowed |= extras[extra]
        for module, top in sorted(set(third_party_imports(package))):
            if any(module.startswith(prefix) and top in provided
                   for prefix, provided in HOST_PROVIDED.items()):
                continue
            dists = {canonical(d) for d in distributions.get(top, [top])}
            if not dists & allowed:
                missing.append('%s imports %s (%s)' % (
                    module, top, ', '.join(sorted(dists))))
    assert missing == []


def test_the_check_sees_an_undeclared_import():
    core, _ = declared()
    assert 'cliff' in core and 'matplotlib' not in core
    assert requirement_names('osc-lib>=2.0  # the plugin\nPyYAML\n') == {
        'osc-lib', 'pyyaml'}
