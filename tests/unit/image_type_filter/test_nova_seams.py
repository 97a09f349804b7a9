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

"""``image_type_filter.nova.compat`` is the one place that says which of
Nova's internals the product touches: its list of the modules that import
Nova is the code's (every product file scanned), and every Nova module
they import is one a seam names. (tests/nova looks every seam up in the
installed Nova.)"""

import ast
import pathlib

from image_type_filter.nova import compat

REPO = pathlib.Path(__file__).resolve().parents[3]
PRODUCT = ('image_type_common', 'image_type_filter', 'virt_capabilities')


def _nova_modules(tree):
    """The Nova modules a module imports, and whether it uses importlib."""
    found, dynamic = set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names
                      if a.name.split('.')[0] == 'nova'}
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split('.')[0] == 'nova':
            found |= {'%s.%s' % (node.module, a.name) for a in node.names}
        elif isinstance(node, ast.Attribute) and node.attr == 'import_module':
            dynamic = True
    return found, dynamic


def _scan():
    return {str(path.relative_to(REPO)): _nova_modules(
                ast.parse(path.read_text(), str(path)))
            for package in PRODUCT for path in (REPO / package).rglob('*.py')}


def test_every_module_that_imports_nova_is_listed():
    importers = {path for path, (found, dynamic) in _scan().items()
                 if found or dynamic}
    assert importers == set(compat.IMPORTERS)


def test_every_nova_module_imported_is_a_seam_s():
    """``from nova import objects`` imports nova.objects, which a seam
    names (``nova.objects:register_all``); ``from nova.scheduler import
    filters``: nova.scheduler.filters."""
    seam_modules = {seam.name.split(':')[0] for seam in compat.SEAMS}
    imported = set().union(*(found for found, _ in _scan().values()))
    assert imported and imported <= seam_modules


def test_every_seam_says_its_part_and_why():
    for seam in compat.SEAMS:
        assert seam.part in compat.WHEN_CHANGED, seam
        assert seam.name.startswith('nova.') and ':' in seam.name, seam
        assert seam.why.strip(), seam
