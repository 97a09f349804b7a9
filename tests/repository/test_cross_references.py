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

"""Every cross-reference in the repository leads somewhere.

Text here names things that live elsewhere, and a rename leaves the old
name behind unless something looks. Each kind of reference is found by one
plain rule in every text file of the repository (``tests/text_files.py``);
in Python only comments and docstrings count, and for option names every
string of the product's three packages too (help texts and messages name
options). A failure is one line per reference, ``file:line: reference:
why``.

- A module path (``image_type_filter.nova.compat``, ``...compat.Nova``):
  the module exists and defines the name that follows it.
- A path from the repository's root (``virt_capabilities/drivers.py``,
  ``doc/source/install/``): it exists, or a build or a run makes it
  (``.gitignore`` says so).
- A section of a Markdown or reStructuredText file (``benchmarks/README.md``
  under "Stock and patched Placement side by side", a title in quotes
  after README, or a capitalised one before "below"): a heading of that
  file begins so.
- An option, ``[group] option`` in prose or a help text, and every option
  of the ini blocks of README and the docs, of ``etc/``, and of the files
  the devstack plugin and the demo write: one of this project's (every
  namespace of its sample files: both sides' ``list_opts``, oslo.log's),
  one of Nova's or of another service this project configures
  (``tests/named_options.py``; tests/nova holds Nova's to the installed
  Nova). The gate jobs' nova.conf lines are held to them by
  ``tests/nova/test_gate_cloud_options.py``.
- No issue numbers: a comment says why, not which issue asked.
"""

import ast
import fnmatch
import functools
import glob
from importlib import metadata
import importlib.util
import io
import os
import re
import textwrap
import tokenize

import pytest

from image_type_common import image_metadata
from image_type_demo import demo
from image_type_demo import fleet
from placement_runner import embedded
from tests import named_options
from tests import text_files
from tests.repository import test_config_blocks as config_blocks
from tests.repository import test_docs

REPO = text_files.REPO
#: Python packages and the top-level folders a dotted path may start with.
PACKAGES = ('image_type_common', 'image_type_filter', 'virt_capabilities',
            'placement_runner', 'image_type_demo', 'gate_cloud',
            'benchmarks', 'tests')
#: What ends a dotted name that is a file's, not a module's.
FILE_SUFFIXES = ('json', 'txt', 'log', 'yaml', 'md', 'rst', 'ini', 'py',
                 'sample', 'service', 'patch', 'png', 'cfg', 'toml', 'sh')
#: Dotted names that look like module paths and are not.
NOT_MODULES = {
    # The one entry nova-scheduler runs and logs (nova/integration.py).
    'image_type_filter.request_filters',
}
#: Paths under one of the repository's folder names that are not ours.
NOT_OURS = {
    'etc/nova': 'Nova\'s, in its virtualenv',
    'etc/glance': 'Glance\'s, in its virtualenv',
}
#: Packages whose every string is read for option names.
PRODUCT = ('image_type_common/', 'image_type_filter/', 'virt_capabilities/')
#: Files whose sections and keys are not OpenStack options (packaging, tox,
#: systemd units and the playbooks that write them).
NOT_OPTIONS = ('.cfg', '.ini', '.toml', '.service', '.yml', '.txt', '.json',
               '.patch')
#: Words that follow ``[group]`` in prose and are no option.
PROSE = frozenset((
    'and', 'are', 'as', 'auth', 'but', 'came', 'credentials', 'defaults',
    'enables', 'enforced', 'extra', 'for', 'from', 'group', 'if', 'in', 'is',
    'keystoneauth1', 'line', 'lines', 'needs', 'of', 'on', 'option',
    'options', 'or', 'points', 'reserved', 'reserves', 'rule', 'section',
    'user', 'when', 'while', 'with'))

MODULE = re.compile(r'(?<![\w./-])((?:%s)(?:\.[A-Za-z_]\w*)+)'
                    % '|'.join(PACKAGES))
OPTION_ROLE = re.compile(r':oslo\.config:option:`(\w+)\.(\w+)`')
OPTION = re.compile(r'(?<![\w.\]\)\[])\[([A-Za-z_]\w*)\]`{0,2}\s+`{0,2}'
                    r'([A-Za-z_]\w*)')
SECTION = re.compile(
    r'(?P<file>\b(?:[\w.-]+/)*[\w.-]+\.(?:md|rst)|\bREADME)`*(?:\'s)?\)?,?'
    r'\s+(?:under\s+|section\s+)?"(?P<title>[^"]+)"')
SECTION_HERE = re.compile(r'"(?P<title>[A-Z][^"]*)"\s+(?:below|above)\b')
ISSUE = re.compile(r'\bissues?\s+#?\d+', re.I)


# -- reading the repository ------------------------------------------------

def _python_comments(text):
    """(line, text) of each block of comment lines, markers removed."""
    blocks, last = [], None
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        body = re.sub(r'^#:?\s?', '', token.string)
        if last is not None and line == last + 1 and blocks:
            blocks[-1] = (blocks[-1][0], blocks[-1][1] + '\n' + body)
        else:
            blocks.append((line, body))
        last = line
    return blocks


def _python_strings(text, docstrings_only):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    if docstrings_only:
        nodes = [node.body[0].value for node in ast.walk(tree)
                 if isinstance(node, (ast.Module, ast.ClassDef,
                                      ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.body and isinstance(node.body[0], ast.Expr)
                 and isinstance(node.body[0].value, ast.Constant)]
    else:
        nodes = list(ast.walk(tree))
    return [(node.lineno, node.value) for node in nodes
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


@functools.cache
def segments(options=False):
    """(path, first line, text) of what the rules read: a whole file, or
    of a Python file its comments and docstrings (with ``options``, every
    string of the product's, and no file of NOT_OPTIONS)."""
    found = []
    for path, text in text_files.text_files():
        if options and path.endswith(NOT_OPTIONS):
            continue
        if path.endswith('.py'):
            parts = _python_comments(text) + _python_strings(
                text, docstrings_only=not (options
                                           and path.startswith(PRODUCT)))
        else:
            parts = [(1, text)]
        found += [(path, line, part) for line, part in parts]
    return tuple(found)


def references(pattern, options=False):
    """(where, match) of each match of ``pattern``, where 'path:line'."""
    for path, first, text in segments(options):
        for match in pattern.finditer(text):
            line = first + text.count('\n', 0, match.start())
            yield '%s:%d' % (path, line), match


# -- modules ----------------------------------------------------------------

@functools.cache
def top_level_names(path):
    """The names a module defines or imports at its top level."""
    with open(path) as f:
        tree = ast.parse(f.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.ClassDef)) and node in tree.body:
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split('.')[0]
                         for a in node.names)
    return names


def module_missing(dotted):
    """Why ``dotted`` leads nowhere, or None: its longest prefix that is a
    package or a module must define the next name."""
    parts = dotted.split('.')
    path = REPO
    for i, part in enumerate(parts):
        if os.path.isdir(os.path.join(path, part)):
            path = os.path.join(path, part)
            continue
        module = os.path.join(path, part + '.py')
        if os.path.isfile(module):
            rest = parts[i + 1:]
            if rest and rest[0] not in top_level_names(module):
                return '%s defines no %s' % (
                    '.'.join(parts[:i + 1]), rest[0])
            return None
        init = os.path.join(path, '__init__.py')
        if not (os.path.isfile(init) and part in top_level_names(init)):
            return 'no module %s' % '.'.join(parts[:i + 1])
        return None
    return None


def test_every_module_path_leads_to_a_module():
    skip = test_docs.entry_point_namespaces() | NOT_MODULES
    found = list(references(MODULE))
    assert len(found) > 100  # the rule still finds the text's modules
    wrong = []
    for where, match in found:
        name = match.group(1)
        text = match.string
        if (name in skip or name.rsplit('.', 1)[-1] in FILE_SUFFIXES
                or text[:match.start()].endswith('option:`')):
            continue
        why = module_missing(name)
        if why:
            wrong.append('%s: %s: %s' % (where, name, why))
    assert not wrong, '\n'.join(wrong)


# -- paths ------------------------------------------------------------------

def top_level_folders():
    return sorted((name for name in os.listdir(REPO)
                   if os.path.isdir(os.path.join(REPO, name))
                   and (not name.startswith('.') or name == '.ci')),
                  key=len, reverse=True)


def path_pattern():
    return re.compile(r'(?<![\w./~$-])((?:%s)/[\w./*<>{}%%$-]*)' % '|'.join(
        re.escape(name) for name in top_level_folders()))


@functools.cache
def ignored():
    """The patterns of .gitignore files, from the repository's root."""
    patterns = []
    for name in ('.gitignore', os.path.join('doc', '.gitignore')):
        base = os.path.dirname(name)
        with open(os.path.join(REPO, name)) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith('#'):
                    patterns.append(os.path.join(base, line.strip('/')))
    return tuple(patterns)


def generated(path):
    parts = path.split('/')
    for i in range(1, len(parts) + 1):
        prefix = '/'.join(parts[:i])
        for pattern in ignored():
            if fnmatch.fnmatch(prefix, pattern) or (
                    '/' not in pattern and fnmatch.fnmatch(parts[i - 1],
                                                           pattern)):
                return True
    return False


def path_missing(reference):
    """Why ``reference`` leads nowhere, or None. A placeholder or a glob
    (``<series>``, ``*``) ends what is checked."""
    kept = []
    for part in reference.split('/'):
        if re.search(r'[*<>{}%$]', part):
            break
        kept.append(part)
    path = '/'.join(kept).rstrip('.')
    if (not path or os.path.lexists(os.path.join(REPO, path))
            or generated(path)
            or any(path == p or path.startswith(p + '/') for p in NOT_OURS)):
        return None
    return 'no such file or directory'


def test_every_path_leads_to_a_file():
    found = list(references(path_pattern()))
    assert len(found) > 200
    wrong = []
    for where, match in found:
        reference = match.group(1).rstrip('.,:;')
        why = path_missing(reference)
        if why:
            wrong.append('%s: %s: %s' % (where, reference, why))
    assert not wrong, '\n'.join(wrong)


# -- sections ---------------------------------------------------------------

def _squash(text):
    return ' '.join(text.replace('`', '').split())


@functools.cache
def headings(path):
    """The section titles of a Markdown or reStructuredText file."""
    with open(os.path.join(REPO, path)) as f:
        lines = f.read().splitlines()
    found, fenced = [], False
    for i, line in enumerate(lines):
        if line.startswith('```'):
            fenced = not fenced
        elif path.endswith('.md') and not fenced:
            match = re.match(r'#{1,6}\s+(.*)', line)
            if match:
                found.append(_squash(match.group(1)))
        elif (path.endswith('.rst') and line.strip() and i + 1 < len(lines)
              and re.fullmatch(r'([=\-~^"\'`#*+])\1+', lines[i + 1])
              and len(lines[i + 1]) >= len(line.strip())):
            found.append(_squash(line))
    return found


def section_missing(path, title):
    if not os.path.isfile(os.path.join(REPO, path)):
        return 'no file %s' % path
    title = _squash(re.sub(r'\n\s*#:?', ' ', title))
    if any(heading.startswith(title) for heading in headings(path)):
        return None
    return 'no section of %s begins so' % path


def test_every_section_named_is_a_heading_of_its_file():
    found = list(references(SECTION))
    assert len(found) >= 2
    wrong = []
    for where, match in found:
        path = match.group('file')
        path = 'README.md' if path == 'README' else path
        why = section_missing(path, match.group('title'))
        if why:
            wrong.append('%s: "%s": %s' % (where, match.group('title'), why))
    for where, match in references(SECTION_HERE):
        path = where.rsplit(':', 1)[0]
        if path.endswith(('.md', '.rst')):
            why = section_missing(path, match.group('title'))
            if why:
                wrong.append('%s: "%s": %s' % (where, match.group('title'),
                                               why))
    assert not wrong, '\n'.join(wrong)


# -- options ----------------------------------------------------------------

@functools.cache
def our_options():
    """{group: options} of every namespace this project's sample files
    list (etc/oslo-config-generator/: both sides' list_opts, and oslo.log's
    for the reporter's command line)."""
    namespaces = set()
    for path in glob.glob(os.path.join(REPO, 'etc', 'oslo-config-generator',
                                       '*.conf')):
        with open(path) as f:
            namespaces.update(re.findall(r'^namespace = (\S+)$', f.read(),
                                         re.M))
    out = {}
    for entry_point in metadata.entry_points(group='oslo.config.opts'):
        if entry_point.name not in namespaces:
            continue
        namespaces.discard(entry_point.name)
        for group, opts in entry_point.load()():
            name = getattr(group, 'name', group) or 'DEFAULT'
            out.setdefault(name, set()).update(o.dest for o in opts)
    assert not namespaces, 'no oslo.config.opts entry point %s' % namespaces
    return out


@functools.cache
def tempest_plugin_options():
    """The tempest plugin's [image_type_filter] options (tempest.conf),
    from its config module (contrib/tempest, a distribution of its own)."""
    path = os.path.join(REPO, 'contrib', 'tempest',
                        'image_type_tempest_plugin', 'config.py')
    spec = importlib.util.spec_from_file_location('tempest_plugin_config',
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {module.group.name: {opt.dest for opt in module.opts}}


def option_missing(group, option):
    """Why ``[group] option`` is nobody's option, or None."""
    for known in (our_options(), named_options.NOVA,
                  tempest_plugin_options()):
        if option in known.get(group, ()):
            return None
    if (group, option) in named_options.OTHERS:
        return None
    return 'no option of this project, Nova or another service it names'


def test_every_option_named_exists():
    found = list(references(OPTION, options=True))
    assert len(found) > 200
    wrong = []
    for where, match in found:
        group, option = match.groups()
        line_start = match.string.rfind('\n', 0, match.start()) + 1
        if option in PROSE or ('\n' in match.group(0) and match.string[
                line_start:match.start()].strip()):
            continue  # a word, or a line ending in [group] and code after
        why = option_missing(group, option)
        if why:
            wrong.append('%s: [%s] %s: %s' % (where, group, option, why))
    for where, match in references(OPTION_ROLE):
        group, option = match.groups()
        if option not in our_options().get(group, ()):
            wrong.append('%s: %s.%s: no option of list_opts' % (
                where, group, option))
    assert not wrong, '\n'.join(wrong)


def written_configs():
    """(what, ini text) of every configuration block and file the project
    gives or writes: README's and the docs' ini blocks, etc/, the demo's
    hosts and its printed nova.conf, the devstack plugin's iniset lines."""
    found = [('README.md', block) for block in config_blocks.readme_blocks()]
    found += [(page, block) for page, block in config_blocks.doc_blocks()]
    for path in config_blocks.etc_files():
        with open(path) as f:
            found.append((os.path.relpath(path, REPO), f.read()))
    found += [('demo host %s' % host.name, textwrap.dedent(host.nova_conf))
              for host in fleet.demo_fleet()]
    found.append(('demo --serve nova.conf', demo.nova_conf(
        embedded.EmbeddedPlacement(), families=image_metadata.NAMES)))
    with open(os.path.join(REPO, 'devstack', 'plugin.sh')) as f:
        plugin = f.read()
    found.append(('devstack/plugin.sh', ''.join(
        '[%s]\n%s = x\n' % match.groups() for match in re.finditer(
            r'\bini(?:set|get|comment)(?:_multiline)?\s+"?\$\{?\w+\}?"?'
            r'\s+(\w+)\s+(\w+)', plugin))))
    return found


@pytest.mark.parametrize('what,text', written_configs(),
                         ids=lambda value: value if '\n' not in value
                         else '')
def test_every_option_a_config_sets_exists(what, text):
    wrong = ['%s: [%s] %s: %s' % (what, group, option,
                                  option_missing(group, option))
             for group, option in config_blocks.set_options(text)
             if option_missing(group, option)]
    assert not wrong, '\n'.join(wrong)


# -- issue numbers ----------------------------------------------------------

def test_no_text_cites_an_issue_number():
    wrong = ['%s: "%s": say why, not which issue asked' % (
        where, match.group(0)) for where, match in references(ISSUE)]
    assert not wrong, '\n'.join(wrong)


# -- the rules themselves ---------------------------------------------------

def test_the_rules_catch_what_drifted():
    """Each rule on a reference that once led nowhere, and on one that
    leads somewhere."""
    assert module_missing('image_type_filter.scheduler.hardware_'
                          'properties')
    assert module_missing('image_type_filter.nova.compat.NEEDZ')
    assert module_missing('image_type_filter.nova.compat.Nova') is None
    assert module_missing('image_type_filter.nova.all_filters') is None
    assert path_missing('contrib/placement/bench' 'mark.py')
    assert path_missing('benchmarks/results/scale.json') is None
    assert path_missing('gate_cloud/constraints/<series>.txt') is None
    assert section_missing('README.md', 'Running inside ' 'Nova')
    assert section_missing('README.md', 'Set-up: two commands') is None
    assert section_missing('benchmarks/README.md',
                           'Stock and patched\n#: Placement') is None
    assert option_missing('scheduler', 'image_type_unknown_' 'format')
    assert option_missing('image_isolation', 'rules') is None
    assert option_missing('filter_scheduler', 'enabled_filters') is None
    assert option_missing('DEFAULT', 'log_dir') is None  # oslo.log's
    assert list(ISSUE.finditer('as issue ' '24 asked'))
