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

"""Every third-party module the project imports is declared, where the
module ships, and the base install is what nova-scheduler needs.

Two distributions come from this repository: image-type-filter (setup.cfg:
the product) and image-type-filter-demo (demo/pyproject.toml: the demo and
the embedded Placement). What nova-scheduler loads (``image_type_filter.nova``
and everything it imports, read from the source) may use only
image-type-filter's install_requires, and install_requires is exactly what
it uses; the rest of the product may also use the ``cli`` extra (and
``candidates --server``'s module Nova, where the command runs); the demo
distribution's packages what it requires, and the benchmarks its ``bench``
extra.
"""

import configparser
from importlib import metadata
import os
import re
import sys
import tomllib

from image_type_common import startup
import placement_runner
from tests import helpers
from tests.repository import test_layout as layout

REPO = helpers.REPO
OURS = {'image_type_common', 'image_type_filter', 'virt_capabilities',
        'placement_runner', 'image_type_demo', 'benchmarks', 'gate_cloud',
        'tests'}
PRODUCT = ('image_type_common', 'image_type_filter', 'virt_capabilities')
PRODUCT_NAME = 'image-type-filter'
#: The demo distribution's packages, and the extras each may lean on
#: beyond what it requires.
DEMO_PACKAGES = {'placement_runner': ('scale',), 'image_type_demo': ()}
#: Not in either distribution: run from the repository, on the demo
#: distribution's bench extra.
BENCHMARKS_EXTRA = 'bench'
#: Provided by the program that loads us: Nova, where it runs: inside
#: nova-scheduler, and for ``candidates --server``, which runs Nova's own
#: code on the scheduler's host, RPC (Nova's oslo.messaging) set up as
#: nova-scheduler sets it up.
HOST_PROVIDED = {'image_type_filter.nova': {'nova'},
                 'image_type_filter.diagnostics.nova_side.as_scheduler': {
                     'nova', 'oslo_messaging'},
                 # The fleet benchmark's code that runs on its devstack
                 # node, by devstack's virtualenv, and its scale driver,
                 # inside nova-compute.
                 'benchmarks.fleet.workload': {'sqlalchemy', 'pymysql'},
                 'benchmarks.fleet.node': {'oslo_log'},
                 'benchmarks.fleet.scale_driver': {'nova', 'oslo_config'}}


def requirement_names(lines):
    names = set()
    for line in lines:
        line = line.split('#', 1)[0].strip()
        if line:
            names.add(canonical(re.split(r'[<>=!~\[; ]', line, maxsplit=1)[0]))
    return names


def canonical(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def product_metadata():
    """(name, version, install_requires lines, {extra: lines})."""
    setup = configparser.ConfigParser()
    setup.read(os.path.join(REPO, 'setup.cfg'))
    extras = {name: value.splitlines() for name, value in
              setup['options.extras_require'].items()}
    return (setup['metadata']['name'], setup['metadata']['version'],
            setup['options']['install_requires'].splitlines(), extras)


def demo_metadata():
    with open(os.path.join(REPO, 'demo', 'pyproject.toml'), 'rb') as f:
        project = tomllib.load(f)['project']
    return (project['name'], project['version'], project['dependencies'],
            project['optional-dependencies'])


def resolved(lines, extras_of):
    """Distribution names ``lines`` install: a requirement of
    ``name[extra]`` on one of this repository's distributions adds what
    that extra lists (``extras_of(name)`` gives (requires, extras))."""
    names = set()
    for line in lines:
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        match = re.match(r'([A-Za-z0-9_.-]+)\s*(?:\[([^\]]*)\])?', line)
        name = canonical(match.group(1))
        names.add(name)
        ours = extras_of(name)
        if ours:
            base, extras = ours
            names |= resolved(base, extras_of)
            for extra in filter(None, (match.group(2) or '').split(',')):
                names |= resolved(extras[extra.strip()], extras_of)
    return names


def extras_of(name):
    for ours, _, base, extras in (product_metadata(), demo_metadata()):
        if name == canonical(ours):
            return base, extras
    return None


def scheduler_modules():
    """What nova-scheduler imports of ours: the Nova integration and the
    runtime, and every module of ours they import, read from the source
    (a package's ``__init__`` comes with its modules)."""
    modules = dict(layout.package_modules())

    def ours(name):
        parts = name.split('.')
        for end in range(len(parts), 0, -1):
            if '.'.join(parts[:end]) in modules:
                return '.'.join(parts[:end])
        return None

    todo = [m for m in modules if layout._in(m, layout.NOVA_RUNTIME)]
    seen = set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split('.')
        todo += ['.'.join(parts[:end]) for end in range(1, len(parts))]
        todo += filter(None, (ours(name) for name in modules[module]))
    return seen


def third_party_imports(prefixes, only=None):
    """(module, top-level name) of every import outside this project and
    the standard library, from the same reading the layout test does."""
    for module, imported in layout.package_modules():
        if not layout._in(module, prefixes) or (only and module not in only):
            continue
        for name in imported:
            top = name.split('.')[0]
            if top not in OURS and top not in sys.stdlib_module_names:
                yield module, top


def undeclared(prefixes, allowed, only=None):
    distributions = metadata.packages_distributions()
    missing = []
    for module, top in sorted(set(third_party_imports(prefixes, only))):
        if any(layout._in(module, (prefix,)) and top in provided
               for prefix, provided in HOST_PROVIDED.items()):
            continue
        dists = {canonical(d) for d in distributions.get(top, [top])}
        if not dists & allowed:
            missing.append('%s imports %s (%s)' % (
                module, top, ', '.join(sorted(dists))))
    return missing


def test_the_scheduler_side_needs_only_the_base_install():
    _, _, base, _ = product_metadata()
    assert undeclared(PRODUCT, requirement_names(base),
                      only=scheduler_modules()) == []


def test_the_base_install_is_exactly_what_the_scheduler_side_imports():
    """Nothing in install_requires that nova-scheduler's imports of ours
    do not use: the command lines' libraries belong to the cli extra."""
    _, _, base, _ = product_metadata()
    distributions = metadata.packages_distributions()
    used = {canonical(d)
            for _, top in third_party_imports(PRODUCT, scheduler_modules())
            if top not in HOST_PROVIDED['image_type_filter.nova']
            for d in distributions.get(top, [top])}
    assert requirement_names(base) == used


def test_the_rest_of_the_product_is_declared_with_the_cli_extra():
    _, _, base, extras = product_metadata()
    allowed = requirement_names(base) | requirement_names(
        extras[startup.CLI_EXTRA])
    assert undeclared(PRODUCT, allowed) == []


def test_the_demo_distribution_declares_its_imports():
    _, _, requires, extras = demo_metadata()
    for package, own_extras in DEMO_PACKAGES.items():
        allowed = resolved(requires, extras_of)
        for extra in own_extras:
            allowed |= resolved(extras[extra], extras_of)
        assert undeclared((package,), allowed) == []


def test_the_benchmarks_run_on_the_bench_extra():
    _, _, requires, extras = demo_metadata()
    allowed = resolved(requires + extras[BENCHMARKS_EXTRA], extras_of)
    assert undeclared(('benchmarks',), allowed) == []


def test_the_two_distributions_are_one_release():
    """The demo requires the product's cli extra at its version (or one
    of pbr's builds before it, VERSION.devN), and the names the errors
    give are the ones setup.cfg and demo/pyproject.toml declare."""
    name, version, _, extras = product_metadata()
    demo_name, demo_version, requires, demo_extras = demo_metadata()
    assert demo_version == version
    major, minor, micro = version.split('.')
    assert '%s[%s]>=%s.dev0,<%s.%s.%d' % (
        name, startup.CLI_EXTRA, version, major, minor, int(micro) + 1) \
        in requires
    assert (startup.DISTRIBUTION, placement_runner.DISTRIBUTION) == (
        name, demo_name)
    assert placement_runner.SCALE_EXTRA in demo_extras
    assert 'cliff' in requirement_names(extras[startup.CLI_EXTRA])


def test_the_check_sees_an_undeclared_import():
    _, _, base, extras = product_metadata()
    assert 'cliff' not in requirement_names(base)
    assert 'matplotlib' not in resolved(base + extras['cli'], extras_of)
    assert requirement_names(['osc-lib>=2.0  # the plugin', 'PyYAML']) == {
        'osc-lib', 'pyyaml'}
    assert 'image_type_common.cli.app' not in scheduler_modules()
    assert 'image_type_common.placement_client' in scheduler_modules()
    assert undeclared(('image_type_common.cli',), requirement_names(base))
    assert 'pgserver' in resolved(['image-type-filter-demo[bench]'],
                                  extras_of)
