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

"""The alerting page (doc/source/admin/monitoring.rst) is true to the
code, both ways.

Every line its tables list is one the product writes: the text an operator
greps for is in a log call's format string of the level the page gives, or
in the message of an error that reaches the log through a call that passes
an error's own line on (``LOG.error('%s', exc)``). And every WARNING and
ERROR the product writes is on the page or in NOT_ALERTING below, with the
reason: a new line, or one whose words changed, turns this red until
somebody decides whether it is worth an alert.

The product's log calls are read from its source (``ast``): ``LOG.<level>``
of any logger named ``LOG`` (``self.app.LOG`` included), ``LOG.log`` and the
reporter's ``FailureLog.failed`` with a ``logging.<LEVEL>`` argument, and the
``(error, logging.<LEVEL>, format)`` tuples the service hands to it.
"""

import ast
import os
import re

from tests import monitoring_page

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PRODUCT = ('image_type_common', 'image_type_filter', 'virt_capabilities')
LEVELS = {'debug': 'DEBUG', 'info': 'INFO', 'warning': 'WARNING',
          'error': 'ERROR', 'exception': 'ERROR', 'critical': 'CRITICAL'}
ALERTABLE = ('WARNING', 'ERROR', 'CRITICAL')

#: WARNING and ERROR lines deliberately not on the page: format -> why.
NOT_ALERTING = {}

#: Calls whose format is only placeholders: they pass on a line made
#: elsewhere (an error's message, a built line). (path, function) -> where
#: the page covers the lines they carry.
PASSES_ON = {
    ('image_type_common/cli/app.py', 'run'):
        'a one-shot command\'s one error line: "What the error part says"',
    ('image_type_filter/nova/integration.py', '_stop'):
        'the "cannot run at all" and "cannot add its filters" lines',
    ('image_type_filter/cmd/candidates.py', 'check_as_nova_would'):
        'what Nova would not see of a question asked (candidates prints '
        'them; --strict exits 2): no alert',
    ('virt_capabilities/service.py', 'summarize'):
        '"provider <uuid>: <error>" and the ownership state error',
    ('virt_capabilities/service.py', 'run_once'):
        'the status file that cannot be written',
    ('virt_capabilities/service.py', '_record_status'):
        'the status file that cannot be written',
    ('virt_capabilities/service.py', '_cycle_done'):
        'the status file that cannot be written',
    ('virt_capabilities/service.py', 'run_remove'):
        'remove\'s provider errors and its ownership state error',
}
#: Calls that log what their caller chose (level and format are
#: arguments): the callers are read instead.
FORWARDERS = {
    ('virt_capabilities/service.py', 'failed'),
    ('virt_capabilities/service.py', '_cycle_done'),
}


class Site:
    def __init__(self, path, line, function, level, text):
        self.path, self.line, self.function = path, line, function
        self.level, self.text = level, text

    @property
    def where(self):
        return '%s:%d' % (self.path, self.line)

    def has_words(self):
        """Whether the format says something of its own (not just %s)."""
        return self.text is not None and re.search(
            r'[A-Za-z]{3}', re.sub(r'%[-#0 +]*[\d.]*[a-zA-Z]', '',
                                   self.text)) is not None


def _level(node):
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == 'logging' and node.attr.lower() in LEVELS):
        return LEVELS[node.attr.lower()]
    return None


def _text(node, constants):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _docstrings(tree):
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, 'body', None)
        if isinstance(body, list) and body and isinstance(
                body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            found.add(id(body[0].value))
    return found


def _sources():
    for package in PRODUCT:
        for root, _, files in os.walk(os.path.join(REPO, package)):
            for name in sorted(files):
                if name.endswith('.py'):
                    path = os.path.join(root, name)
                    with open(path) as f:
                        yield os.path.relpath(path, REPO), ast.parse(f.read())


def _sites_of(path, tree):
    constants = {t.id: n.value.value for n in tree.body
                 if isinstance(n, ast.Assign) and isinstance(
                     n.value, ast.Constant) and isinstance(n.value.value, str)
                 for t in n.targets if isinstance(t, ast.Name)}
    sites = []

    def visit(node, function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.Call) and isinstance(node.func,
                                                     ast.Attribute):
            name = node.func.attr
            on_log = ast.unparse(node.func.value).split('.')[-1] == 'LOG'
            args = node.args
            if on_log and name in LEVELS and args:
                sites.append(Site(path, node.lineno, function, LEVELS[name],
                                  _text(args[0], constants)))
            elif on_log and name == 'log' and len(args) >= 2:
                sites.append(Site(path, node.lineno, function,
                                  _level(args[0]), _text(args[1], constants)))
            elif name == 'failed' and len(args) >= 3:
                sites.append(Site(path, node.lineno, function,
                                  _level(args[1]), _text(args[2], constants)))
        if isinstance(node, ast.Tuple) and len(node.elts) == 3 and _level(
                node.elts[1]):
            sites.append(Site(path, node.lineno, function,
                              _level(node.elts[1]),
                              _text(node.elts[2], constants)))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return sites


def product():
    """(log call sites, the other string constants: error messages)."""
    sites, messages = [], []
    for path, tree in _sources():
        sites += _sites_of(path, tree)
        docstrings = _docstrings(tree)
        messages += [n.value for n in ast.walk(tree)
                     if isinstance(n, ast.Constant) and isinstance(
                         n.value, str) and id(n) not in docstrings]
    return sites, messages


SITES, MESSAGES = product()
ROWS = monitoring_page.rows()


def test_the_page_has_the_tables_this_test_reads():
    # A table the parser missed would check nothing.
    levels = {level for _, level, _ in ROWS}
    assert len(ROWS) > 40 and {'INFO', 'WARNING', 'ERROR', None} <= levels


def test_every_line_the_page_lists_is_one_the_product_writes():
    passes_on = {s.level for s in SITES if not s.has_words()}
    wrong = []
    for text, level, number in ROWS:
        written = [s for s in SITES if s.text and text in s.text
                   and level in (None, s.level)]
        # An error's message, logged by a call that passes it on.
        said = any(text in m for m in MESSAGES) and (
            level is None or level in passes_on)
        if not written and not said:
            wrong.append('monitoring.rst:%d: %s %r' % (number, level, text))
    assert not wrong, 'the page lists lines the product does not write ' \
        '(at that level): %s' % wrong


def test_every_warning_and_error_is_on_the_page_or_said_not_worth_it():
    unlisted = []
    for site in SITES:
        key = (site.path, site.function)
        if site.level is None:
            assert key in FORWARDERS, '%s logs at a level it does not ' \
                'name: read its callers here' % site.where
            continue
        if site.level not in ALERTABLE:
            continue
        if not site.has_words():
            if key not in PASSES_ON and key not in FORWARDERS:
                unlisted.append('%s %s %r (passes a line on: say in '
                                'PASSES_ON where the page covers it)'
                                % (site.where, site.level, site.text))
            continue
        if site.text in NOT_ALERTING:
            continue
        if not any(text in site.text and level == site.level
                   for text, level, _ in ROWS):
            unlisted.append('%s %s %r' % (site.where, site.level, site.text))
    assert not unlisted, 'lines neither on doc/source/admin/monitoring.rst ' \
        'nor in NOT_ALERTING: %s' % unlisted


def test_the_lists_name_only_what_exists():
    keys = {(s.path, s.function) for s in SITES}
    texts = {s.text for s in SITES}
    assert set(PASSES_ON) <= keys and FORWARDERS <= keys
    assert set(NOT_ALERTING) <= texts


def test_the_reader_finds_every_form_of_log_call():
    source = ast.parse(
        "BESIDE = 'a named line'\n"
        "def one():\n"
        "    LOG.warning('plain %s', x)\n"
        "    self.app.LOG.error('%s', exc)\n"
        "    LOG.warning(BESIDE)\n"
        "    failures.failed(key, logging.ERROR, 'said once: %s', exc)\n"
        "    failed = (exc, logging.WARNING, 'a tuple: %s')\n"
        "    LOG.log(level, msg)\n"
        "    LOG.debug('quiet')\n")
    found = [(s.function, s.level, s.text, s.has_words())
             for s in _sites_of('x.py', source)]
    assert sorted(found, key=str) == sorted([
        ('one', 'WARNING', 'plain %s', True),
        ('one', 'ERROR', '%s', False),
        ('one', 'WARNING', 'a named line', True),
        ('one', 'ERROR', 'said once: %s', True),
        ('one', 'WARNING', 'a tuple: %s', True),
        ('one', None, None, False),
        ('one', 'DEBUG', 'quiet', True)], key=str)
