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

"""The documentation says what the code does.

The option reference and the command reference are generated (oslo.config's
and cliff's Sphinx extensions); these tests build the docs once, as text, and
hold the generated pages to the code: every option ``list_opts`` gives, in
its group, in the reference and in the sample file; every command an entry
point declares (``setup.cfg``, ``demo/pyproject.toml``), on its command
line's page. The one exit-code table has every code the commands use and no
other, and README's links into the docs must lead somewhere. That every
module, file, section and option the pages (and the rest of the
repository) name exists is ``test_cross_references.py``'s.
"""

import configparser
import importlib
import os
import re
import tomllib

from oslo_upgradecheck import upgradecheck
import pytest
from sphinx.cmd import build as sphinx_build

from image_type_common import exceptions as common_exceptions
from image_type_filter.cmd import candidates
from image_type_filter.diagnostics import readiness
from tests import helpers
from virt_capabilities.cmd import report

REPO = helpers.REPO
SOURCE = os.path.join(REPO, 'doc', 'source')
#: Command-line page of each command entry-point namespace, and how an
#: entry point's name reads on the command line.
COMMAND_PAGES = {
    'virt_capabilities.commands': ('cli/virt-capabilities', str),
    'image_type_filter.commands': ('cli/image-type-filter', str),
    'openstack.image_type.v1': ('cli/openstack-image-type',
                                lambda name: name.replace('_', ' ')),
}


def entry_points(namespace):
    """name -> object of ``namespace``, from both distributions: the
    product's (setup.cfg) and the demo's (demo/pyproject.toml, which adds
    ``image-type-filter demo``)."""
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(REPO, 'setup.cfg'))
    lines = cfg['options.entry_points'].get(namespace, '').strip().splitlines()
    found = dict(tuple(part.strip() for part in line.split('=', 1))
                 for line in lines if line.strip())
    found.update(demo_entry_points().get(namespace, {}))
    return found


def demo_entry_points():
    with open(os.path.join(REPO, 'demo', 'pyproject.toml'), 'rb') as f:
        return tomllib.load(f)['project']['entry-points']


def entry_point_namespaces():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(REPO, 'setup.cfg'))
    return set(cfg['options.entry_points']) | set(demo_entry_points())


@pytest.fixture(scope='module')
def text_docs(tmp_path_factory):
    """The docs built once by Sphinx's text builder: page -> text."""
    out = tmp_path_factory.mktemp('doc-text')
    status = sphinx_build.build_main(
        ['-q', '-E', '-b', 'text', '-d', str(out / 'doctrees'), SOURCE,
         str(out / 'text')])
    assert status == 0
    pages = {}
    for directory, _, files in os.walk(out / 'text'):
        for name in files:
            if name.endswith('.txt'):
                path = os.path.join(directory, name)
                page = os.path.relpath(path, out / 'text')[:-len('.txt')]
                with open(path) as f:
                    pages[page] = f.read()
    return pages


def sections(text, underline):
    """{title: body} of a page's sections underlined with ``underline``."""
    parts = re.split(r'^(\S[^\n]*)\n%s+\n' % re.escape(underline), text,
                     flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def documented_options(text):
    """{group: {option}} of a generated option reference (text)."""
    return {group: set(re.findall(r'^(\w+)\n\n   Type:', body, re.M))
            for group, body in sections(text, '=').items()}


def code_options(namespace):
    module, _, function = entry_points('oslo.config.opts')[namespace] \
        .partition(':')
    return {group if isinstance(group, str) else group.name:
            {opt.dest for opt in opts}
            for group, opts in getattr(importlib.import_module(module),
                                       function)()}


@pytest.mark.slow
@pytest.mark.parametrize('namespace', ['virt_capabilities',
                                       'image_type_filter'])
def test_option_reference_has_every_option_of_list_opts(text_docs,
                                                        namespace):
    page = 'configuration/%s' % namespace.replace('_', '-')
    expected = code_options(namespace)
    assert documented_options(text_docs[page]) == expected


@pytest.mark.slow
@pytest.mark.parametrize('namespace', ['virt_capabilities',
                                       'image_type_filter'])
def test_sample_file_has_every_option_of_list_opts(text_docs, namespace):
    sample = os.path.join(SOURCE, '_static', '%s.conf.sample'
                          % namespace.replace('_', '-'))
    found, group = {}, None
    with open(sample) as f:
        for line in f:
            if line.startswith('['):
                group = line.strip().strip('[]')
            match = re.match(r'^#(\w+) =', line)
            if match:
                found.setdefault(group, set()).add(match.group(1))
    for group, names in code_options(namespace).items():
        assert names <= found.get(group, set()), group


@pytest.mark.slow
@pytest.mark.parametrize('namespace', sorted(COMMAND_PAGES))
def test_command_reference_has_every_command(text_docs, namespace):
    page, spelled = COMMAND_PAGES[namespace]
    expected = {spelled(name) for name in entry_points(namespace)}
    assert expected  # setup.cfg declares commands there
    assert set(sections(text_docs[page], '=')) == expected


@pytest.mark.slow
def test_every_page_is_built(text_docs):
    pages = {os.path.relpath(os.path.join(d, f), SOURCE)[:-len('.rst')]
             for d, _, files in os.walk(SOURCE) for f in files
             if f.endswith('.rst')}
    assert pages <= set(text_docs)


def test_readmes_links_lead_somewhere():
    with open(os.path.join(REPO, 'README.md')) as f:
        links = re.findall(r'\]\(([^)#]+)\)', f.read())
    assert any(link.startswith('doc/source/') for link in links)
    for link in links:
        if '://' not in link:
            assert os.path.exists(os.path.join(REPO, link)), link


#: README's bounds: a newcomer reaches both set-up commands within one
#: screen, and the whole file stays a page that points into the docs.
README_MAX_LINES = 130
README_COMMANDS_WITHIN = 50


def test_readme_is_one_screen_to_its_two_commands():
    with open(os.path.join(REPO, 'README.md')) as f:
        lines = f.read().splitlines()
    assert len(lines) <= README_MAX_LINES
    for marker in ('<!-- main-command -->', '<!-- test-command -->'):
        assert lines.index(marker) < README_COMMANDS_WITHIN, marker


def exit_code_table():
    """The codes of the one exit-code table (cli/index.rst)."""
    with open(os.path.join(SOURCE, 'cli', 'index.rst')) as f:
        text = f.read()
    table = text[text.index('Exit codes\n'):]
    return {int(code) for code in re.findall(r'^   \* - (\d+)$', table,
                                             re.M)}


def test_exit_code_table_has_every_code_the_commands_use():
    codes = {0, candidates.NO_VALID_HOST, readiness.COULD_NOT_CHECK,
             report.DRIFT}
    codes |= {code.value for code in upgradecheck.Code}
    codes |= {error.exit_code
              for error in vars(common_exceptions).values()
              if isinstance(error, type) and hasattr(error, 'exit_code')}
    assert exit_code_table() == codes
