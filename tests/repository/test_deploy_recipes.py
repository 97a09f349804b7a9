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

"""The deployment recipes name only what exists.

``doc/source/install/openstack-ansible.rst`` and its playbook use only
variables, groups and files the os_nova role has (the facts recorded in
``openstack_ansible_facts.py``, with the commit they were read at); the
package version the recipes pin is this one; the unit the playbook copies
is the one the package installs. What the tools do with the recipes is
checked beside this module: ``test_kolla.py``, ``test_kolla_ansible.py``
and ``test_openstack_ansible.py`` (the slow tier), and
``test_kolla_reporter.py``.
"""

import configparser
import os
import re
import textwrap

import yaml

from tests.repository import openstack_ansible_facts as facts
from tests.repository import test_config_blocks as blocks

REPO = blocks.REPO
OSA_PAGE = 'doc/source/install/openstack-ansible.rst'
USER_VARIABLES = '/etc/openstack_deploy/user_variables.yml'
OSA_RESULT = ('/etc/nova/nova.conf on a nova_scheduler host (the lines '
              'that change)')
#: Where the page's user_variables.yml has the wheel's directory.
PAGE_WHEEL_URL = 'https://files.example.org/image-type-filter'
#: And the version in the wheel's name (pbr's: one per commit).
PAGE_VERSION = 'VERSION'
OSA_PLAYBOOK = os.path.join(REPO, 'contrib', 'openstack-ansible',
                            'virt-capabilities.yml')
KOLLA_OVERRIDE = os.path.join(REPO, 'contrib', 'kolla',
                              'template-overrides.j2')
SHIPPED_UNIT = os.path.join(REPO, 'etc', 'systemd',
                            'virt-capabilities.service')
COMPUTE_PAGE = 'doc/source/install/compute.rst'


def page_yaml(page):
    """{caption: text} of a page's ``.. code-block:: yaml`` blocks."""
    with open(os.path.join(REPO, page)) as f:
        text = f.read()
    found = {}
    for match in re.finditer(
            r'^\.\. code-block:: yaml\n((?:   :.*\n)*)\n((?:(?:   .*)?\n)+)',
            text + '\n', re.M):
        caption = re.search(r':caption: (.*)', match.group(1))
        found[caption.group(1) if caption else None] = \
            textwrap.dedent(match.group(2))
    return found


def osa_result_block():
    return {caption: body for page, caption, body
            in blocks.captioned_doc_blocks()
            if page == OSA_PAGE}[OSA_RESULT]


def user_variables():
    return yaml.safe_load(page_yaml(OSA_PAGE)[USER_VARIABLES])


def test_every_variable_the_page_sets_is_os_novas():
    assert set(user_variables()) <= set(facts.VARIABLES)
    assert {'nova_user_pip_packages', 'nova_nova_conf_overrides'} <= \
        set(user_variables())


def test_the_pages_result_is_the_roles_list_with_ours(tmp_path):
    """The nova.conf lines the page shows follow from the role's default
    list and the page's extra filter (the slow tier has config_template
    write them)."""
    variables = user_variables()
    values = blocks.parse_as_nova(tmp_path, osa_result_block())
    assert values[('filter_scheduler', 'enabled_filters')] == \
        facts.VARIABLES['nova_scheduler_default_filters'] + \
        variables['nova_scheduler_extra_filters']
    overrides = variables['nova_nova_conf_overrides']
    mapping = overrides['filter_scheduler']['available_filters']
    assert isinstance(mapping, dict) and not any(mapping.values())
    assert values[('filter_scheduler', 'available_filters')] == \
        sorted(mapping)
    assert values[('scheduler', 'filter_hosts_by_image_type_support')] is \
        True


def test_the_package_list_names_this_releases_wheel_by_url():
    """A direct reference to the wheel, with its hash: no index is asked
    for the name (test_openstack_ansible.py has pip install it)."""
    [entry] = user_variables()['nova_user_pip_packages']
    assert entry.startswith('image-type-filter{{ ')
    assert ' @ %s/image_type_filter-%s-py3-none-any.whl#sha256=' \
        'WHEEL_SHA256' % (PAGE_WHEEL_URL, PAGE_VERSION) in entry
    assert "ternary('[cli]', '')" in entry
    # Compute hosts for the reporter, scheduler hosts for the readiness
    # check against the scheduler's nova.conf.
    assert "group_names | intersect(['%s', '%s'])" % (
        facts.GROUPS['nova-compute'], facts.GROUPS['nova-scheduler']) \
        in entry


def test_the_kolla_override_names_the_package_for_no_index():
    """It installs from the release directory (test_kolla.py renders it),
    never ``image-type-filter`` by name, pinned or not."""
    with open(KOLLA_OVERRIDE) as f:
        lines = [line for line in f if line.startswith('RUN ')
                 or line.startswith('    &&') or '{% set' in line]
    assert lines
    assert not [line for line in lines
                if re.search(r"['\"\s]image-type-filter(\[cli\])?"
                             r"(==|['\"\s])", line)]


def test_the_playbook_uses_only_what_the_role_has():
    with open(OSA_PLAYBOOK) as f:
        text = f.read()
    [play] = yaml.safe_load(text)
    assert play['hosts'] == facts.GROUPS['nova-compute']
    used = set(re.findall(r'\b(nova_\w+)\b', text)) - set(
        facts.GROUPS.values())
    assert used <= set(facts.VARIABLES), used - set(facts.VARIABLES)
    # The role's own default for the venv's bin directory, when
    # user_variables.yml does not set nova_bin.
    default = ' '.join(play['vars']['virt_capabilities_venv_bin'].split())
    before, after = facts.NOVA_BIN.split('%s')
    expected = ("default('%s' ~ (nova_venv_tag | default(venv_tag | "
                "default('untagged'))) ~ '%s')" % (before, after))
    assert expected in default
    assert '--config-file %s ' % facts.NOVA_CONF in text
    # The unit it enables follows nova-compute (test_systemd_units.py
    # replays os_nova's handlers on a real systemd).
    with open(SHIPPED_UNIT) as f:
        unit = f.read()
    for key in ('PartOf', 'WantedBy'):
        assert re.findall(r'^%s=(.*)$' % key, unit, re.M) == [
            facts.NOVA_COMPUTE_UNIT]


def test_the_shipped_unit_runs_the_reporter_of_the_guides_virtualenv():
    """The compute guide installs into a virtualenv (a system-wide pip
    install is refused on Debian 12); the unit it copies from there runs
    that virtualenv's virt-capabilities."""
    with open(os.path.join(REPO, COMPUTE_PAGE)) as f:
        guide = f.read()
    [venv] = re.findall(r'^   # python3 -m venv (\S+)$', guide, re.M)
    # The package from the release directory, into that virtualenv.
    assert re.search(r'^   # %s/bin/pip install --require-hashes '
                     % re.escape(venv), guide, re.M)
    assert re.search(r'^   # install -m 0644 %s/share/image-type-filter/'
                     r'systemd/virt-capabilities\.service /etc/systemd/'
                     r'system/$' % re.escape(venv), guide, re.M)
    with open(SHIPPED_UNIT) as f:
        unit = f.read()
    [program] = re.findall(r'^ExecStart=(\S+) report ', unit, re.M)
    assert program == venv + '/bin/virt-capabilities'


def test_the_unit_the_playbook_copies_is_the_one_the_package_installs():
    parser = configparser.ConfigParser()
    parser.read(os.path.join(REPO, 'setup.cfg'))
    data_files = parser['options.data_files']
    assert data_files['share/image-type-filter/systemd'].strip() == \
        os.path.relpath(SHIPPED_UNIT, REPO)
    with open(OSA_PLAYBOOK) as f:
        assert '/share/image-type-filter/systemd/virt-capabilities.service' \
            in re.sub(r'\s+', '', f.read()).replace('}}/', '/')
    # It runs as the user nova-compute runs as, after nova-compute.
    with open(SHIPPED_UNIT) as f:
        unit = f.read()
    assert 'User=%s\n' % facts.VARIABLES['nova_system_user_name'] in unit
    assert facts.NOVA_COMPUTE_UNIT in re.search(r'^After=(.*)$', unit,
                                                re.M).group(1)


def test_the_shipped_units_comment_installs_from_the_release_directory():
    """Not from the public index (nothing is published under the name):
    the dependencies by their own names, then the package hash-checked
    from the release directory, as the install guide does
    (test_systemd_units.py runs these lines)."""
    with open(SHIPPED_UNIT) as f:
        comment = [line[4:] for line in f if line.startswith('#   ')]
    pips = [line for line in comment if '/bin/pip install ' in line]
    assert [line.split('/bin/pip install ')[1].split()[0] for line in
            pips] == ['-r', '--require-hashes']
    assert '--require-hashes --no-index --no-deps --find-links ' in pips[1]
    assert not [line for line in comment if 'image-type-filter[' in line]
