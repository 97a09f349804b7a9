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

"""The test tree keeps the layout a newcomer finds their way in.

* ``tests/unit`` mirrors the packages, module for module, as Nova's and
  Placement's ``tests/unit`` do: the tests of
  ``image_type_filter/scheduler/isolation.py`` are
  ``tests/unit/image_type_filter/scheduler/test_isolation.py``. A test
  named after a module (or sub-package) of its package sits in the folder
  of the package holding that module; every other test sits in the folder
  of a package it imports or names.
* ``tests/functional`` has one folder per package, flat inside: its tests
  run commands and services end to end, across a package's modules.
* ``tests/repository`` holds the checks of the repository rather than of
  a package (docs, config blocks, recipes, CI wiring, licence headers).
* ``tests/nova`` runs in a virtualenv of its own, with Nova installed.

The packages are the product's three and the harness's own
(``image_type_demo``, ``placement_runner``, ``gate_cloud``,
``benchmarks``). A test module anywhere else fails with one line saying
where it belongs, so the layout cannot rot one file at a time.
"""

import ast
import collections
import configparser
import os
import re
import tomllib

import pytest

from tests import helpers

REPO = helpers.REPO
TESTS = os.path.join(REPO, 'tests')
#: The packages whose tests mirror them: the product's floor and halves,
#: and the harness's.
FLOOR = ('image_type_common',)
HALVES = ('image_type_filter', 'virt_capabilities')
HARNESS = ('image_type_demo', 'placement_runner', 'gate_cloud', 'benchmarks')
PACKAGES = FLOOR + HALVES + HARNESS
#: Folders of tests/ and what they hold.
MIRRORED = ('unit', 'functional')
SUITES = MIRRORED + ('repository', 'nova')
GUIDE = 'doc/source/contributor/testing.rst'


def _package_tree():
    """{dotted package: {names of its modules and sub-packages}}."""
    tree = {}
    for top in PACKAGES:
        for root, dirs, files in os.walk(os.path.join(REPO, top)):
            dirs[:] = sorted(d for d in dirs if os.path.isfile(
                os.path.join(root, d, '__init__.py')))
            dotted = os.path.relpath(root, REPO).replace(os.sep, '.')
            tree[dotted] = {f[:-3] for f in files if f.endswith('.py')
                            and f != '__init__.py'} | set(dirs)
    return tree


TREE = _package_tree()


def _holders(name, top=None):
    """The packages (below ``top``, if given) holding a module or
    sub-package called ``name``."""
    return sorted(package for package, names in TREE.items()
                  if name in names
                  and (top is None or (package + '.').startswith(top + '.')))


def _imports(source):
    """The modules of PACKAGES the source imports, dotted, in order."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module \
                and not node.level:
            for alias in node.names:
                dotted = node.module + '.' + alias.name
                package, _, name = dotted.rpartition('.')
                found.append(dotted if name in TREE.get(package, ())
                             else node.module)
    return [m for m in found if m.split('.')[0] in PACKAGES]


def _commands():
    """{command or sub-command name: the package providing it}, from both
    distributions' entry points (``demo`` is image_type_demo's)."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(os.path.join(REPO, 'setup.cfg'))
    points = {}
    for group in ('console_scripts', 'image_type_filter.commands',
                  'virt_capabilities.commands'):
        for line in parser['options.entry_points'][group].splitlines():
            if '=' in line:
                name, target = (p.strip() for p in line.split('=', 1))
                points[name] = target
    with open(os.path.join(REPO, 'demo', 'pyproject.toml'), 'rb') as f:
        for group in tomllib.load(f)['project']['entry-points'].values():
            points.update(group)
    return {name: target.split('.')[0] for name, target in points.items()}


COMMANDS = _commands()


def _names(source, dotted):
    """Whether the source imports or names the package ``dotted``: its
    dotted name, or (for a whole package) a command or sub-command it
    provides, as a string (``'virt-capabilities'``, ``'demo'``). The floor,
    ``image_type_common``, is named by a test of both halves at once: what
    every command shares (one error line, TLS, roles)."""
    if re.search(r'(?<![\w.])%s(?![\w])' % re.escape(dotted), source):
        return True
    if '.' in dotted:
        return False
    strings = {node.value for node in ast.walk(ast.parse(source))
               if isinstance(node, ast.Constant)
               and isinstance(node.value, str)}
    if dotted == 'image_type_common':
        return all(_names(source, half) for half in HALVES)
    return any(COMMANDS.get(s) == dotted for s in strings)


def _home(suite, module):
    """The folder of tests/<suite> for the tests of ``module``."""
    parts = module.split('.')
    if suite == 'functional':
        return parts[0]
    if module in TREE and len(parts) > 1:
        parts = parts[:-1]  # a sub-package's own tests sit beside it
    elif module not in TREE:
        parts = parts[:-1]  # a module's tests sit in its package's folder
    return '.'.join(parts)


def _folder(suite, dotted):
    return 'tests/%s/%s/' % (suite, dotted.replace('.', '/'))


def where_it_belongs(relpath, source):
    """None where the test module at ``relpath`` (from tests/) is in its
    place, else one line saying where it belongs."""
    parts = relpath.split('/')
    suite, folder, filename = parts[0], parts[1:-1], parts[-1]
    name = filename[len('test_'):-len('.py')]
    if suite in ('repository', 'nova'):
        return None
    imports = _imports(source)
    if suite in MIRRORED and folder and '.'.join(folder) in TREE:
        dotted = '.'.join(folder)
        if suite == 'functional' and len(folder) > 1:
            return ('tests/%s belongs in %s: tests/functional has one folder'
                    ' per package, flat inside (%s)'
                    % (relpath, _folder(suite, folder[0]), GUIDE))
        holders = _holders(name, folder[0]) if suite == 'unit' else []
        if holders and dotted not in holders:
            return ('tests/%s belongs in %s: it is named after %s (%s)'
                    % (relpath, ' or '.join(_folder(suite, h)
                                            for h in holders),
                       ' and '.join(h + '.' + name for h in holders),
                       GUIDE))
        if holders or _names(source, dotted):
            return None
    # Out of place: say where, from what it is named after and imports.
    if suite not in MIRRORED:
        suite = 'unit'
    named = [h for h in _holders(name)
             if h.split('.')[0] in {m.split('.')[0] for m in imports}]
    # The floor is imported by nearly every test, the harness by many: a
    # test belongs to the most specific package it imports.
    for group in (HALVES, HARNESS, FLOOR):
        if any(m.split('.')[0] in group for m in imports):
            imports = [m for m in imports if m.split('.')[0] in group]
            break
    homes = collections.Counter(_home(suite, m) for m in imports)
    if named and suite == 'unit':
        home, why = named[0], 'it is named after %s.%s' % (named[0], name)
    elif homes:
        home = homes.most_common(1)[0][0]
        why = 'it imports %s' % ', '.join(
            m for m in dict.fromkeys(imports) if _home(suite, m) == home)
    else:
        return ('tests/%s belongs in tests/%s/<package>/ for the package it'
                ' tests, or in tests/repository/ if it checks the'
                " repository's files (%s)" % (relpath, suite, GUIDE))
    return 'tests/%s belongs in %s: %s (%s)' % (
        relpath, _folder(suite, home), why, GUIDE)


def _test_modules():
    for root, dirs, files in os.walk(TESTS):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for filename in sorted(files):
            if filename.startswith('test_') and filename.endswith('.py'):
                path = os.path.join(root, filename)
                yield os.path.relpath(path, TESTS).replace(os.sep, '/'), path


def test_every_test_module_is_where_the_layout_says():
    misplaced = []
    for relpath, path in _test_modules():
        with open(path) as f:
            problem = where_it_belongs(relpath, f.read())
        if problem:
            misplaced.append(problem)
    assert misplaced == [], '\n'.join(misplaced)


def test_the_suites_are_the_ones_the_guide_describes():
    suites = sorted({relpath.split('/')[0]
                     for relpath, _ in _test_modules()})
    assert suites == sorted(SUITES)
    with open(os.path.join(REPO, GUIDE)) as f:
        guide = f.read()
    assert [s for s in SUITES if '``tests/%s``' % s not in guide] == []


def test_every_folder_of_tests_is_a_package():
    """Two test_x.py in different folders are two modules only when each
    folder is a package (pytest's default import mode)."""
    missing = sorted(
        os.path.relpath(root, REPO)
        for root, _, files in os.walk(TESTS)
        if any(f.startswith('test_') and f.endswith('.py') for f in files)
        and '__init__.py' not in files)
    assert missing == []


def test_every_import_of_a_test_module_finds_it():
    """A module moved is followed by every import of it, tests/nova's too
    (README's test command never imports those: they need Nova)."""
    def exists(dotted):
        path = os.path.join(REPO, *dotted.split('.'))
        return os.path.isfile(path + '.py') or os.path.isfile(
            os.path.join(path, '__init__.py'))
    broken = []
    for root, dirs, files in os.walk(TESTS):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for filename in sorted(f for f in files if f.endswith('.py')):
            path = os.path.join(root, filename)
            with open(path) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if not (isinstance(node, ast.ImportFrom) and node.module
                        and node.module.split('.')[0] == 'tests'):
                    continue
                package = os.path.join(REPO, *node.module.split('.'))
                for alias in node.names:
                    wanted = (node.module + '.' + alias.name
                              if os.path.isdir(package) else node.module)
                    if not exists(wanted):
                        broken.append('%s:%d: %s' % (
                            os.path.relpath(path, REPO), node.lineno,
                            wanted))
    assert broken == []


@pytest.mark.parametrize('relpath,source,belongs', [
    # A product test at the top of tests/unit: by what it is named after.
    ('unit/test_ownership.py', 'from virt_capabilities import ownership\n',
     'tests/unit/test_ownership.py belongs in tests/unit/virt_capabilities/:'
     ' it is named after virt_capabilities.ownership'),
    # In the wrong package's folder.
    ('unit/virt_capabilities/test_trait_catalog.py',
     'from image_type_filter.scheduler import trait_catalog\n',
     'tests/unit/virt_capabilities/test_trait_catalog.py belongs in'
     ' tests/unit/image_type_filter/scheduler/: it is named after'
     ' image_type_filter.scheduler.trait_catalog'),
    # In its package's folder, but the module is in a sub-package.
    ('unit/image_type_filter/test_our_filters.py',
     'from image_type_filter.diagnostics import our_filters\n',
     'tests/unit/image_type_filter/test_our_filters.py belongs in'
     ' tests/unit/image_type_filter/diagnostics/: it is named after'
     ' image_type_filter.diagnostics.our_filters'),
    # Named after no module: by what it imports.
    ('unit/test_outage.py',
     'from image_type_common import exceptions\n'
     'from virt_capabilities import service\n'
     'from virt_capabilities import reporter\n',
     'tests/unit/test_outage.py belongs in tests/unit/virt_capabilities/:'
     ' it imports virt_capabilities.service, virt_capabilities.reporter'),
    ('functional/test_reporter_restart.py',
     'from virt_capabilities import reporter\n',
     'tests/functional/test_reporter_restart.py belongs in'
     ' tests/functional/virt_capabilities/: it imports'
     ' virt_capabilities.reporter'),
    ('functional/image_type_filter/scheduler/test_isolation.py',
     'from image_type_filter.scheduler import isolation\n',
     'tests/functional/image_type_filter/scheduler/test_isolation.py'
     ' belongs in tests/functional/image_type_filter/: tests/functional'
     ' has one folder per package, flat inside'),
    # Imports nothing of ours: a package's test or a repository check.
    ('unit/test_readme.py', 'import os\n',
     'tests/unit/test_readme.py belongs in tests/unit/<package>/ for the'
     ' package it tests, or in tests/repository/ if it checks the'
     " repository's files"),
    ('test_anything.py', 'from gate_cloud import sources\n',
     'tests/test_anything.py belongs in tests/unit/gate_cloud/: it imports'
     ' gate_cloud.sources'),
])
def test_a_test_in_the_wrong_place_is_told_where_it_belongs(
        relpath, source, belongs):
    said = where_it_belongs(relpath, source)
    assert said is not None and '\n' not in said
    assert said.startswith(belongs), said
    assert said.endswith('(%s)' % GUIDE)


@pytest.mark.parametrize('relpath,source', [
    ('unit/image_type_filter/scheduler/test_isolation.py',
     'from image_type_filter.scheduler import isolation\n'),
    # A sub-package's tests as a whole sit beside it.
    ('unit/virt_capabilities/test_conf.py',
     'from virt_capabilities import conf\n'),
    # Named after no module, importing its folder's package.
    ('unit/virt_capabilities/test_failure_log.py',
     'from virt_capabilities import service\n'),
    # A functional test running a command names it.
    ('functional/virt_capabilities/test_service_conduct.py',
     "COMMAND = ['virt-capabilities', 'report']\n"),
    ('repository/test_anything.py', 'import os\n'),
])
def test_a_test_in_its_place_passes(relpath, source):
    assert where_it_belongs(relpath, source) is None
