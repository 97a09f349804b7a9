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

"""The Keystone role each command needs is written once
(``image_type_common.cli.roles``) and held to what the operator reads:
every command of every command line has a row, its ``--help`` (the page
under doc/source/cli/ is generated from it) ends with that row's line, and
the installation guide's role table says the same role."""

from importlib import metadata
import os
import re

import pytest

from image_type_common.cli import roles
from tests import helpers
from tests.unit.image_type_common.cli import test_help

GUIDE = 'doc/source/install/credentials.rst'
#: Entry-point groups of each command line; the openstack plugin's
#: commands are image-type-filter's, named ``image-type_<command>``.
GROUPS = {'virt-capabilities': 'virt_capabilities.commands',
          'image-type-filter': 'image_type_filter.commands'}
PLUGIN = 'openstack.image_type.v1'


def _commands():
    return {(program, ep.name) for program, group in GROUPS.items()
            for ep in metadata.entry_points(group=group)}


def test_every_command_has_a_role_and_no_row_names_a_gone_one():
    assert set(roles.ROLES) == _commands()


@pytest.mark.parametrize('program,command', sorted(roles.ROLES))
def test_each_commands_help_ends_with_its_role(program, command):
    code, out, err = test_help.run(program, command, '--help')
    assert code == 0, err
    assert ' '.join(roles.epilog(program, command).split()) in ' '.join(
        out.split())


def test_the_openstack_plugin_commands_say_the_same_roles():
    for ep in metadata.entry_points(group=PLUGIN):
        command = ep.name.split('_', 1)[1]
        assert ep.load()._epilog == roles.epilog('image-type-filter',
                                                 command), ep.name


def _role_table():
    """The rows of the guide's Keystone role table: (who, smallest role),
    each cell's text on one line."""
    with open(os.path.join(helpers.REPO, GUIDE), encoding='utf-8') as f:
        text = f.read()
    section = text.split('Keystone roles\n', 1)[1].split(
        '\nGive each compute node', 1)[0]
    table = section.split('.. list-table::', 1)[1]
    rows = []
    for block in re.split(r'\n   \* - ', table)[1:]:
        cells = [' '.join(c.split()) for c in re.split(r'\n     - ', block)]
        rows.append(cells)
    return rows[1:]  # the header


_COMMAND = re.compile(r'``(virt-capabilities|image-type-filter) (\w+)``')
_OPTION = re.compile(r'``(--[a-z-]+)``')
_ROLE = re.compile(r'^(?:``(service|admin)``|(none)\b)')


def test_the_guides_role_table_says_what_the_code_says():
    seen = set()
    for cells in _role_table():
        who, role = cells[0], cells[-1]
        commands = _COMMAND.findall(who)
        if not commands:
            continue  # nova-scheduler: not a command
        match = _ROLE.match(role)
        assert match, role
        said = match.group(1) or match.group(2)
        options = set(_OPTION.findall(who))
        for key in commands:
            needs = {need.options: need for need in roles.ROLES[key]}
            chosen = tuple(o for o in next(
                (opts for opts in needs if opts and set(opts) <= options),
                ()))
            assert said == needs[chosen].role, (key, chosen, role)
            seen.add((key, chosen))
    assert seen == {(key, need.options) for key, needs in roles.ROLES.items()
                    for need in needs}
