"""The package layout keeps its promises: imports only go one way.

``image_type_common`` imports neither half; the compute side never imports
the scheduler side; on the scheduler side only the demo/test harness may
import the reporter, and the runtime (with the Nova integration) imports
neither diagnostics nor the harness. Nothing imports ``tests``. The Nova
integration's own fresh-interpreter check is in tests/nova, where Nova is
installed.
"""

import ast
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PACKAGES = ('image_type_common', 'image_type_filter', 'virt_capabilities')
#: What nova-scheduler (or our own scheduler client) loads on every boot.
RUNTIME_MODULES = (
    'image_type_filter.conf',
    'image_type_filter.scheduler.fleet_shape',
    'image_type_filter.scheduler.isolation',
    'image_type_filter.scheduler.query',
    'image_type_filter.scheduler.request_filter',
    'image_type_filter.scheduler.request_spec',
    'image_type_filter.scheduler.scheduler_client',
    'image_type_filter.scheduler.spec_fields',
    'image_type_filter.scheduler.trait_catalog',
)


def package_modules():
    """(dotted module name, imported module names) for every package file."""
    for package in PACKAGES + ('benchmarks',):
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


def rule(module, name):
    top = name.split('.')[0]
    if top == 'tests':
        return 'nothing imports the tests'
    if module.startswith('image_type_common') and top in (
            'image_type_filter', 'virt_capabilities'):
        return 'the shared package imports neither half'
    if module.startswith('virt_capabilities') and top == 'image_type_filter':
        return 'the compute side never imports the scheduler side'
    if module.startswith('image_type_filter') and top == 'virt_capabilities' \
            and not module.startswith('image_type_filter.harness'):
        return 'only the harness may import the reporter'
    if module.startswith(('image_type_filter.scheduler',
                          'image_type_filter.conf',
                          'image_type_filter.nova')) and name.startswith(
            ('image_type_filter.diagnostics', 'image_type_filter.harness',
             'image_type_filter.cmd')):
        return 'the runtime imports no diagnostics, harness or CLI'
    return None


def test_imports_go_one_way():
    assert violations(rule) == []


def test_the_rule_catches_a_wrong_import():
    """The checker itself sees what it should forbid."""
    assert rule('image_type_filter.scheduler.isolation',
                'virt_capabilities.custom_traits')
    assert rule('image_type_common.cli', 'virt_capabilities.conf')
    assert rule('image_type_filter.scheduler.query',
                'image_type_filter.diagnostics.survey')
    assert rule('virt_capabilities.reporter', 'tests.helpers')
    assert rule('image_type_filter.nova.integration',
                'image_type_filter.harness.fleet')
    assert rule('image_type_filter.harness.fleet',
                'virt_capabilities.service') is None


@pytest.mark.parametrize('module', RUNTIME_MODULES)
def test_runtime_loads_nothing_of_the_reporter(module):
    """In a fresh interpreter, as nova-scheduler would import it."""
    probe = ('import importlib, sys\n'
             'importlib.import_module(%r)\n'
             'print("\\n".join(sorted(m for m in sys.modules if m.startswith('
             '("virt_capabilities", "image_type_filter.harness", '
             '"image_type_filter.diagnostics", "image_type_filter.cmd")))))'
             % module)
    proc = subprocess.run([sys.executable, '-c', probe], capture_output=True,
                          text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == []
