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

"""The Keystone role each command needs: one table, written once.

Every command's ``--help`` (and so its page under doc/source/cli/, which
is generated from the commands) ends with its line from here
(``epilog``), and the installation guide's role table, which says why
each role is the smallest the default policies allow
(doc/source/install/credentials.rst, "Keystone roles"), is held to it by a
repository test, as is the list of commands.
"""

import dataclasses

SERVICE = 'service'
ADMIN = 'admin'
NONE = 'none'


@dataclasses.dataclass(frozen=True)
class Need:
    """A role a command needs, why, and the options that make it need it
    (none: the command itself)."""

    role: str
    why: str
    options: tuple = ()


_PLACEMENT = 'Placement\'s default policy'
_WRITES_TRAITS = (Need(SERVICE, _PLACEMENT + '; on an ironic node, Ironic\'s '
                       'for its node\'s traits'),)
#: (command line, command) -> what it needs, the command itself first.
ROLES = {
    ('virt-capabilities', 'report'): _WRITES_TRAITS,
    ('virt-capabilities', 'remove'): _WRITES_TRAITS,
    ('virt-capabilities', 'show'): (
        Need(NONE, 'it talks to no service'),),
    ('image-type-filter', 'status'): (Need(SERVICE, _PLACEMENT),),
    ('image-type-filter', 'candidates'): (
        Need(SERVICE, _PLACEMENT),
        Need(ADMIN, 'Nova\'s default policy keeps compute services and '
             'other projects\' servers to admin',
             ('--server', '--image', '--flavor'))),
    ('image-type-filter', 'demo'): (
        Need(NONE, 'its own embedded Placement, no Keystone'),),
}


def _options(options):
    return ', '.join(options[:-1]) + ' or ' + options[-1] if len(
        options) > 1 else options[0]


def epilog(program, command):
    """The line ``program command --help`` ends with."""
    needs = ROLES[(program, command)]
    parts = ['%s%s (%s)' % ('with %s: ' % _options(need.options)
                            if need.options else '', need.role, need.why)
             for need in needs]
    text = 'Keystone role needed: ' + '; '.join(parts) + '.'
    if any(need.role != NONE for need in needs):
        text += (' The role is in the project the credentials name: see '
                 '"Credentials: Keystone roles and TLS" in the installation '
                 'guide.')
    return text
