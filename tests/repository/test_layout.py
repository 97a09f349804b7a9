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

"""The package layout keeps its promises: imports only go one way.

What doc/source/contributor/architecture.rst says, room by room
(``MAY_IMPORT``): ``image_type_common`` imports nothing of ours; the
compute side and the scheduler side import only it, never each other;
``placement_runner`` only the floor; the demo the product and the runner;
the benchmarks those and the demo; the tools the product; ``gate_cloud``
nothing but the standard library. Inside the scheduler side, what
nova-scheduler runs imports no diagnostics or command. Only a command line
imports the command-line package (``image_type_common.cli``: cliff, yaml),
and registering either side's options loads no command-line library. Nothing
imports ``tests``. The Nova integration's own fresh-interpreter check is in
tests/nova, where Nova is installed.
"""

import ast
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
#: The product's three packages.
PRODUCT = ('image_type_common', 'virt_capabilities', 'image_type_filter')
#: Every room whose Python the rules read, and the rooms each may import
#: besides itself (the architecture page's "Who imports whom").
MAY_IMPORT = {
    'image_type_common': (),
    'virt_capabilities': ('image_type_common',),
    'image_type_filter': ('image_type_common',),
    'placement_runner': ('image_type_common',),
    'image_type_demo': PRODUCT + ('placement_runner',),
    'benchmarks': PRODUCT + ('placement_runner', 'image_type_demo'),
    'tools': PRODUCT,
    'gate_cloud': (),
}
PACKAGES = tuple(MAY_IMPORT)
#: Rooms that run from a bare python3: the standard library alone.
STANDARD_LIBRARY_ONLY = ('gate_cloud',)
#: The one module outside gate_cloud that calls into it: the fleet
#: benchmark's client of the gate's container and devstack job.
GATE_CLIENT = 'benchmarks.fleet.gate'
#: Modules of those rooms that another python3 runs, and what it has
#: beyond the standard library: local.conf is rendered by the devstack
#: container's own python3, with Debian's python3-yaml
#: (gate_cloud/container.py INCLUDE); the devstack phases reach the cloud
#: through openstacksdk from devstack's virtualenv (devstack_node.PYTHON).
RUN_ELSEWHERE = {'gate_cloud.localconf': ('yaml',),
                 'gate_cloud.devstack_node': ('openstack', 'keystoneauth1')}
#: What nova-scheduler loads: the request filters and the rebuild check.
NOVA_RUNTIME = ('image_type_filter.conf', 'image_type_filter.exceptions',
                'image_type_filter.settings', 'image_type_filter.scheduler',
                'image_type_filter.nova')
#: Not for nova-scheduler: the operator's tools.
NOT_RUNTIME = ('image_type_filter.diagnostics', 'image_type_filter.cmd')
#: Libraries of a command line, which nova-scheduler must not be made to
#: load on our account.
CLI_LIBRARIES = ('cliff', 'cmd2', 'prettytable', 'osc_lib',
                 'oslo_upgradecheck', 'openstack', 'yaml', 'autopage')
#: The command lines, the only modules that may import
#: ``image_type_common.cli`` (cliff, yaml: the cli extra).
COMMAND_LINES = ('image_type_common.cli', 'image_type_common.startup',
                 'image_type_filter.cmd', 'virt_capabilities.cmd',
                 'image_type_demo.cmd')
#: Where each side registers its options: nova-scheduler (through
#: ``image_type_filter.nova``), the reporter before its command line
#: starts, oslo-config-generator.
OPTION_MODULES = ('image_type_filter.conf', 'virt_capabilities.conf',
                  'virt_capabilities.logs')
RUNTIME_MODULES = (
    'image_type_filter.conf',
    'image_type_filter.settings',
    'image_type_filter.scheduler.image_metadata_prefilter',
    'image_type_filter.scheduler.image_type_support',
    'image_type_filter.scheduler.isolation',
    'image_type_filter.scheduler.pipeline',
    'image_type_filter.scheduler.spec_fields',
    'image_type_filter.scheduler.trait_catalog',
    'image_type_filter.scheduler.trait_grammar',
    'image_type_filter.scheduler.warn_once',
)


def package_modules():
    """(dotted module name, imported module names) for every package file."""
    for package in PACKAGES:
        for root, _, files in os.walk(os.path.join(REPO, package)):
            for name in files:
                if not name.endswith('.py'):
                    continue
                path = os.path.join(root, name)
                dotted = os.path.relpath(path, REPO)[:-3].replace(os.sep, '.')
                with open(path) as f:
                    tree = ast.parse(f.read(), path)
                imported = set()
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        imported.update(a.name for a in node.names)
                    elif isinstance(node, ast.ImportFrom) and node.module:
                        imported.update('%s.%s' % (node.module, a.name)
                                        for a in node.names)
                yield dotted.removesuffix('.__init__'), imported


def violations(allowed):
    found = []
    for module, imported in package_modules():
        for name in sorted(imported):
            reason = allowed(module, name)
            if reason:
                found.append('%s imports %s: %s' % (module, name, reason))
    return found


def _in(name, prefixes):
    return any(name == p or name.startswith(p + '.') for p in prefixes)


def rule(module, name):
    top = name.split('.')[0]
    if top == 'tests':
        return 'nothing imports the tests'
    if _in(name, ('image_type_common.cli',)) and not _in(module,
                                                          COMMAND_LINES):
        return 'only a command line imports the command-line package'
    room = module.split('.')[0]
    if room in STANDARD_LIBRARY_ONLY and top != room and \
            top not in sys.stdlib_module_names and \
            top not in RUN_ELSEWHERE.get(module, ()):
        return '%s runs from a bare python3: the standard library only' % room
    if top not in PACKAGES or top == room:
        if module.startswith('image_type_filter') and _in(
                module, NOVA_RUNTIME) and _in(name, NOT_RUNTIME):
            return 'what nova-scheduler runs imports no diagnostics or CLI'
        return None
    if top in MAY_IMPORT[room] or (top == 'gate_cloud' and
                                   module == GATE_CLIENT):
        return None
    return '%s may import only %s of ours' % (
        room, ', '.join(MAY_IMPORT[room]) or 'nothing')


def test_imports_go_one_way():
    assert violations(rule) == []


def test_the_rule_catches_a_wrong_import():
    """The checker itself sees what it should forbid."""
    assert rule('image_type_filter.scheduler.isolation',
                'virt_capabilities.settings')
    assert rule('image_type_common.cli', 'virt_capabilities.conf')
    assert rule('image_type_filter.scheduler.pipeline',
                'image_type_filter.diagnostics.our_filters')
    assert rule('image_type_filter.nova.integration',
                'image_type_filter.cmd.common')
    assert rule('virt_capabilities.reporter', 'tests.helpers')
    assert rule('placement_runner.embedded', 'image_type_filter.settings')
    assert rule('image_type_filter.cmd.main', 'image_type_demo.cmd')
    assert rule('virt_capabilities.service', 'placement_runner.embedded')
    assert rule('placement_runner.embedded', 'virt_capabilities.settings')
    assert rule('image_type_demo.cmd', 'benchmarks.run')
    assert rule('tools.check_installed', 'placement_runner.embedded')
    assert rule('gate_cloud.cloud', 'image_type_common.tls')
    assert rule('gate_cloud.cloud', 'requests')
    assert rule('gate_cloud.cloud', 'gate_cloud.layout') is None
    assert rule('gate_cloud.cloud', 'subprocess') is None
    assert rule('benchmarks.scale.build', 'image_type_demo.fleet') is None
    assert rule('tools.check_installed', 'image_type_filter.nova') is None
    assert rule('image_type_demo.fleet', 'virt_capabilities.service') is None
    assert rule('benchmarks.run', 'placement_runner.embedded') is None
    assert rule('benchmarks.fleet.gate', 'gate_cloud.container') is None
    assert rule('benchmarks.fleet.run', 'gate_cloud.container')
    assert rule('image_type_filter.cmd.status',
                'image_type_filter.diagnostics.survey') is None
    assert rule('virt_capabilities.logs', 'image_type_common.cli.app')
    assert rule('image_type_common.connection',
                'image_type_common.cli.arguments')
    assert rule('virt_capabilities.cmd.show',
                'image_type_common.cli.column_types') is None


def loaded_after_import(module):
    """Modules a fresh interpreter holds after importing ``module``."""
    probe = ('import importlib, sys\n'
             'importlib.import_module(%r)\n'
             'print("\\n".join(sorted(sys.modules)))' % module)
    proc = subprocess.run([sys.executable, '-c', probe], capture_output=True,
                          text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.parametrize('module', RUNTIME_MODULES)
def test_what_nova_scheduler_runs_loads_no_cli_or_other_room(module):
    """In a fresh interpreter, as nova-scheduler would import it (the Nova
    suite checks ``image_type_filter.nova`` itself, beside Nova's own
    imports)."""
    loaded = loaded_after_import(module)
    ours = [m for m in loaded if _in(m, NOT_RUNTIME + (
        'virt_capabilities', 'placement_runner', 'image_type_demo'))]
    assert ours == []
    assert [m for m in loaded if _in(m, CLI_LIBRARIES)] == []


@pytest.mark.parametrize('module', OPTION_MODULES)
def test_registering_options_loads_no_cli_library(module):
    """The compute side's options (and the scheduler side's) come without
    cliff or yaml: oslo-config-generator and nova-scheduler need no
    command line."""
    loaded = loaded_after_import(module)
    assert [m for m in loaded if _in(m, CLI_LIBRARIES)] == []
