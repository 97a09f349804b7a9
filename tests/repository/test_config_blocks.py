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

"""Every configuration block we give operators parses as Nova parses it.

README's ``ini`` blocks, the documentation's ``.. code-block:: ini`` blocks
(``doc/source/**/*.rst``), the files under ``etc/`` and the nova.conf the
devstack plugin leaves are each written to a file and loaded by oslo.config
with Nova's own option types (``[filter_scheduler] available_filters`` is a
MultiStrOpt and ``enabled_filters`` a ListOpt in nova/conf/scheduler.py)
plus ours. oslo.config has no inline comments: a ``# ...`` after a value
becomes part of it, and after a section header it is a parse error.
"""

import glob
import os
import re
import textwrap

from oslo_config import cfg
import pytest

from image_type_filter import conf as itf_conf
from tests import helpers
from tests.repository import test_devstack_plugin as devstack
from virt_capabilities import conf as vc_conf

REPO = helpers.REPO
#: nova/conf/scheduler.py (nova 34.0.0): the options README's blocks set.
NOVA_OPTS = {
    'filter_scheduler': [
        cfg.MultiStrOpt('available_filters',
                        default=['nova.scheduler.filters.all_filters']),
        cfg.ListOpt('enabled_filters', default=[])],
    'scheduler': [
        cfg.BoolOpt('query_placement_for_image_type_support',
                    default=False)],
}


def nova_conf():
    conf = cfg.ConfigOpts()
    for group, opts in NOVA_OPTS.items():
        conf.register_opts(opts, group=group)
    itf_conf.register_nova_opts(conf)
    vc_conf.register_opts(conf)
    return conf


def readme_blocks():
    with open(os.path.join(REPO, 'README.md')) as f:
        text = f.read()
    return re.findall(r'^```ini\n(.*?)^```', text, re.S | re.M)


def doc_blocks():
    """(page, block) for every ``.. code-block:: ini`` of the docs."""
    return [(page, body) for page, _, body in captioned_doc_blocks()]


def captioned_doc_blocks():
    """(page, caption or None, block) for every ``.. code-block:: ini`` of
    the docs: the caption names the file a block is for."""
    found = []
    pattern = re.compile(
        r'^( *)\.\. code-block:: ini\n((?:\1 +:.*\n)*)\n'
        r'((?:(?:\1 +.*)?\n)+)', re.M)
    for path in sorted(glob.glob(os.path.join(REPO, 'doc', 'source', '**',
                                              '*.rst'), recursive=True)):
        with open(path) as f:
            text = f.read()
        for match in pattern.finditer(text + '\n'):
            body = textwrap.dedent(match.group(3)).strip('\n') + '\n'
            caption = re.search(r':caption: (.*)', match.group(2))
            found.append((os.path.relpath(path, REPO),
                          caption.group(1).strip() if caption else None,
                          body))
    return found


def etc_files():
    return sorted(glob.glob(os.path.join(REPO, 'etc', '**', '*.conf'),
                            recursive=True))


def set_options(text):
    """(section, key) for each option line of an ini text."""
    section, found = None, []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith('['):
            section = line.strip('[]')
        elif line and not line.startswith(('#', ';')) and '=' in line:
            found.append((section, line.split('=', 1)[0].strip()))
    return found


def parse_as_nova(tmp_path, text):
    path = tmp_path / 'nova.conf'
    path.write_text(text)
    conf = nova_conf()
    conf(args=[], default_config_files=[str(path)], project='nova',
         use_env=False)
    values = {}
    for section, key in set_options(text):
        group = conf if section == 'DEFAULT' else conf[section]
        if key in group:
            values[(section, key)] = getattr(group, key)
    return values


def assert_no_comment_in_values(values):
    for where, value in values.items():
        for item in value if isinstance(value, list) else [value]:
            assert '#' not in str(item), (where, item)


def test_readme_has_the_blocks_this_test_reads():
    assert len(readme_blocks()) >= 1


@pytest.mark.parametrize('index', range(len(readme_blocks())))
def test_readme_block_parses_as_nova_reads_it(tmp_path, index):
    values = parse_as_nova(tmp_path, readme_blocks()[index])
    assert values  # it set options Nova or we know
    assert_no_comment_in_values(values)


def test_the_docs_have_the_blocks_this_test_reads():
    pages = {page for page, _ in doc_blocks()}
    assert {'doc/source/install/scheduler.rst',
            'doc/source/admin/isolation.rst',
            'doc/source/admin/image-metadata.rst'} <= pages


@pytest.mark.parametrize('page,block', doc_blocks(),
                         ids=lambda v: v if v.endswith('.rst') else '')
def test_doc_block_parses_as_nova_reads_it(tmp_path, page, block):
    values = parse_as_nova(tmp_path, block)
    assert values  # it set options Nova or we know
    assert_no_comment_in_values(values)


def assert_loads_the_filters(values):
    assert values[('filter_scheduler', 'available_filters')] == [
        'nova.scheduler.filters.all_filters',
        'image_type_filter.nova.all_filters']
    assert 'ImageTypeRebuildFilter' in values[
        ('filter_scheduler', 'enabled_filters')]
    assert values[('scheduler', 'filter_hosts_by_image_type_support')] is True


def test_readme_scheduler_block_means_what_it_says(tmp_path):
    block = [b for b in readme_blocks() if '[filter_scheduler]' in b][0]
    assert_loads_the_filters(parse_as_nova(tmp_path, block))


def test_install_guides_scheduler_block_means_what_it_says(tmp_path):
    block = [b for p, b in doc_blocks()
             if p.endswith('install/scheduler.rst')][0]
    values = parse_as_nova(tmp_path, block)
    assert_loads_the_filters(values)
    assert values[('image_isolation', 'rules')] == ['CUSTOM_TROVE']


def test_isolation_guides_reporter_block_names_the_trait_alone(tmp_path):
    block = [b for p, b in doc_blocks() if '[virt_capabilities]' in b][0]
    values = parse_as_nova(tmp_path, block)
    assert values[('virt_capabilities', 'custom_traits')] == ['CUSTOM_TROVE']


def test_a_doc_block_is_read_whole(tmp_path, monkeypatch):
    """The reader itself: an indented block, its options, a blank line
    inside it, and the text after it left out."""
    page = tmp_path / 'doc' / 'source' / 'page.rst'
    page.parent.mkdir(parents=True)
    page.write_text('Text.\n\n.. code-block:: ini\n   :caption: x\n\n'
                    '   [image_isolation]\n   enabled = True\n\n'
                    '   # reserved\n   rules = CUSTOM_TROVE\n\nAfter.\n')
    monkeypatch.setitem(globals(), 'REPO', str(tmp_path))
    [(name, block)] = doc_blocks()
    assert name == os.path.join('doc', 'source', 'page.rst')
    assert block == ('[image_isolation]\nenabled = True\n\n# reserved\n'
                     'rules = CUSTOM_TROVE\n')


@pytest.mark.parametrize('path', etc_files(),
                         ids=lambda p: os.path.relpath(p, REPO))
def test_etc_file_parses_as_nova_reads_it(tmp_path, path):
    with open(path) as f:
        text = f.read()
    if '[DEFAULT]' in text and 'namespace' in text:
        return  # an oslo-config-generator input, not a nova.conf
    values = parse_as_nova(tmp_path, text)
    assert values
    assert_no_comment_in_values(values)


def test_an_inline_comment_is_caught(tmp_path):
    """The check itself: what README once had fails it."""
    with pytest.raises(cfg.ConfigFileParseError):
        parse_as_nova(tmp_path, '[image_isolation]   # optional\n'
                                'enabled = True\n')
    values = parse_as_nova(tmp_path, '[virt_capabilities]\ncustom_traits = '
                                     'CUSTOM_TROVE  # ours\n')
    with pytest.raises(AssertionError):
        assert_no_comment_in_values(values)


def test_devstacks_nova_conf_parses_as_nova_reads_it(tmp_path):
    calls = devstack.run_phase(tmp_path, 'stack', 'post-config')
    lines = {}
    for call in calls:
        words = call.split()
        if words[0] == 'iniset':
            lines.setdefault(words[2], []).append(
                '%s = %s' % (words[3], ' '.join(words[4:])))
        elif words[0] == 'iniset_multiline':
            lines.setdefault(words[2], []).extend(
                '%s = %s' % (words[3], v) for v in words[4:])
    text = ''.join('[%s]\n%s\n' % (s, '\n'.join(o)) for s, o in
                   lines.items())
    values = parse_as_nova(tmp_path, text)
    assert values[('filter_scheduler', 'available_filters')] == [
        'nova.scheduler.filters.all_filters',
        'image_type_filter.nova.all_filters']
    assert values[('scheduler', 'filter_hosts_by_image_type_support')] is True
    assert_no_comment_in_values(values)
