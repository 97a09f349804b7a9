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

"""An ironic node's traits, kept on a real Ironic's node.

One real Ironic (API and conductor, fake-hardware, SQLite) for the module;
each test enrolls nodes of its own. The reporter runs as an operator runs
it, ``virt-capabilities report`` with the node's nova.conf, whose
``[placement]`` points at a server that records every request: for an
ironic node the reporter must never write (nor read) Placement.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from tests import helpers
from tests import ironic_server

RESERVED = 'CUSTOM_TROVE'
#: What inspection rules and operators put on nodes: never the reporter's.
INSPECTED = 'CUSTOM_INSPECTED_GPU'
OPERATORS = 'CUSTOM_RACK_A1'
STANDARD = 'HW_CPU_X86_AVX2'


@pytest.fixture(scope='module')
def ironic():
    with ironic_server.IronicServer() as server:
        yield server


@pytest.fixture
def node_conf(tmp_path, ironic, listener):
    """A nova.conf of an ironic nova-compute, with ``extra`` options."""
    def write(custom_traits=(RESERVED,), extra='', name='nova.conf',
              ironic_section=None):
        path = tmp_path / name
        path.write_text(textwrap.dedent('''\
            [DEFAULT]
            compute_driver = ironic.IronicDriver
            state_path = %s
            [virt_capabilities]
            custom_traits = %s
            %s
            ''') % (tmp_path, ', '.join(custom_traits), extra)
            + (ironic.nova_conf_section() if ironic_section is None
               else ironic_section)
            + listener.nova_conf_section())
        return str(path)
    return write


def report(conf, *nodes, extra_args=()):
    args = [sys.executable, '-m', 'virt_capabilities.cmd.main', 'report',
            '--config-file', conf, *extra_args]
    for node in nodes:
        args += ['--provider', node]
    return subprocess.run(args, capture_output=True, text=True,
                          timeout=helpers.SAFETY_TIMEOUT,
                          env=helpers.clean_env())


def last_line(result):
    return result.stderr.strip().splitlines()[-1]


def test_sets_its_trait_and_leaves_the_nodes_others(ironic, node_conf,
                                                     listener, unique):
    node = ironic.enroll('bm-set-' + unique,
                         traits=(INSPECTED, OPERATORS, STANDARD))
    result = report(node_conf(), 'bm-set-' + unique)
    assert result.returncode == 0, result.stderr
    assert ironic.traits(node) == {RESERVED, INSPECTED, OPERATORS, STANDARD}
    # What it synced is named for what it is: an Ironic node.
    assert 'INFO virt_capabilities.reporter: Ironic node %s: traits added ' \
        '%s, removed -' % (node, RESERVED) in result.stderr
    assert 'sync done: 1 Ironic node(s) checked, 1 changed' in result.stderr
    # Nothing at all went to Placement: nova-compute copies node traits.
    assert listener.requests == []


def test_removes_only_its_own_when_dropped(ironic, node_conf, unique):
    node = ironic.enroll('bm-drop-' + unique, traits=(INSPECTED,))
    assert report(node_conf((RESERVED, 'CUSTOM_GOLD')), node).returncode == 0
    assert ironic.traits(node) == {RESERVED, 'CUSTOM_GOLD', INSPECTED}
    # An operator adds a trait by hand meanwhile: not the reporter's.
    ironic.add_trait(node, OPERATORS)
    result = report(node_conf(('CUSTOM_GOLD',)), node)
    assert result.returncode == 0, result.stderr
    assert ironic.traits(node) == {'CUSTOM_GOLD', INSPECTED, OPERATORS}
    result = report(node_conf(()), node)
    assert result.returncode == 0, result.stderr
    assert ironic.traits(node) == {INSPECTED, OPERATORS}


def test_a_trait_two_reporters_keep_stays_while_either_does(
        ironic, node_conf, unique):
    """Two reporters of one node sharing a state file: the one that added
    the trait and the one that found it there keep it while either wants
    it."""
    node = ironic.enroll('bm-two-' + unique)
    first = node_conf(name='a.conf', extra='reporter_name = a')
    second = node_conf(name='b.conf', extra='reporter_name = b')
    assert report(first, node).returncode == 0   # adds it
    assert report(second, node).returncode == 0  # keeps it too
    node_conf((), name='a.conf', extra='reporter_name = a')
    assert report(first, node).returncode == 0
    assert ironic.traits(node) == {RESERVED}
    node_conf((), name='b.conf', extra='reporter_name = b')
    assert report(second, node).returncode == 0
    assert ironic.traits(node) == set()


def test_by_uuid_and_several_nodes(ironic, node_conf, unique):
    nodes = [ironic.enroll('bm-many-%d-%s' % (i, unique)) for i in range(3)]
    result = report(node_conf(), *nodes)
    assert result.returncode == 0, result.stderr
    assert all(ironic.traits(n) == {RESERVED} for n in nodes)


def test_a_provider_that_is_no_ironic_node(ironic, node_conf, unique):
    node = ironic.enroll('bm-other-' + unique)
    result = report(node_conf(), 'libvirt-host-' + unique, node)
    assert result.returncode == 1
    assert ironic.traits(node) == {RESERVED}  # the others are synced
    assert last_line(result) == (
        "ERROR virt_capabilities.service: no Ironic node found for name "
        "'libvirt-host-%s' (from --provider; Ironic at %s/v1/ has no such "
        "node); the others were synced" % (unique, ironic.endpoint))


def test_dry_run_writes_nothing(ironic, node_conf, unique):
    node = ironic.enroll('bm-dry-' + unique, traits=(INSPECTED,))
    result = report(node_conf(), node, extra_args=('--dry-run', '-f',
                                                   'json'))
    assert result.returncode == 3, result.stderr  # it differs
    assert json.loads(result.stdout) == [{
        'provider': node, 'uuid': node, 'add': [RESERVED], 'remove': []}]
    result = report(node_conf(), node, extra_args=('--check',))
    assert result.returncode == 3, result.stderr
    assert result.stdout == (
        'drift: 1 of 1 Ironic node(s) differ from what this node should '
        'carry: %s (%s) add %s, remove -\n' % (node, node, RESERVED))
    assert ironic.traits(node) == {INSPECTED}


def test_unreachable_ironic_fails_naming_it_and_writes_nothing(
        ironic, node_conf, listener, unique, tmp_path):
    node = ironic.enroll('bm-down-' + unique)
    down = 'http://127.0.0.1:%d' % ironic_server._free_port()
    conf = node_conf(ironic_section='[ironic]\nauth_type = none\n'
                                    'endpoint_override = %s\n' % down)
    result = report(conf, node)
    assert result.returncode == 1
    assert last_line(result).endswith(
        'cannot reach Ironic at %s: connection refused' % down)
    assert ironic.traits(node) == set()
    assert listener.requests == []  # no fall back to the provider
    assert not (tmp_path / 'virt_capabilities.json').exists()


def test_no_ironic_section_is_a_configuration_error(node_conf, listener):
    result = report(node_conf(ironic_section=''), 'any-node')
    assert result.returncode == 2
    assert last_line(result).startswith(
        'ERROR virt-capabilities: [ironic] auth_type is not set')
    assert listener.requests == []


@pytest.mark.parametrize('command', ['show', 'report'])
def test_reporter_owned_image_types_are_refused(node_conf, listener,
                                                command):
    conf = node_conf(extra='image_type_traits_owner = reporter')
    result = subprocess.run(
        [sys.executable, '-m', 'virt_capabilities.cmd.main', command,
         '--config-file', conf, '--provider', 'any-node'],
        capture_output=True, text=True, timeout=helpers.SAFETY_TIMEOUT,
        env=helpers.clean_env())
    assert result.returncode == 2
    assert last_line(result) == (
        'ERROR virt-capabilities: [virt_capabilities] '
        'image_type_traits_owner = reporter is refused with compute_driver '
        'ironic.IronicDriver: nova-compute\'s resource tracker keeps an '
        'ironic node\'s COMPUTE_IMAGE_TYPE_* traits (its capability traits) '
        'and its ironic driver replaces every other trait of the provider '
        'with the Ironic node\'s; leave it at nova-compute')
    assert listener.requests == []


@pytest.mark.parametrize('how', ['os-cloud', 'environment'])
def test_openstacksdk_reaches_ironic_instead_of_the_section(
        ironic, node_conf, listener, tmp_path, unique, how):
    """``--os-cloud``, or with no ``[ironic]`` auth the ``OS_*``
    variables: openstacksdk's baremetal proxy instead of ``[ironic]``."""
    node = ironic.enroll('bm-sdk-%s-%s' % (how, unique))
    clouds = tmp_path / 'clouds.yaml'
    clouds.write_text(textwrap.dedent('''\
        clouds:
          bare:
            auth_type: none
            baremetal_endpoint_override: %s
        ''' % ironic.endpoint))
    if how == 'os-cloud':
        args = ['--os-cloud', 'bare']
        env = helpers.clean_env(OS_CLIENT_CONFIG_FILE=str(clouds))
    else:
        args = []
        env = helpers.clean_env(
            OS_AUTH_TYPE='none',
            OS_BAREMETAL_ENDPOINT_OVERRIDE=ironic.endpoint)
    result = subprocess.run(
        [sys.executable, '-m', 'virt_capabilities.cmd.main', 'report',
         '--config-file', node_conf(ironic_section=''), *args,
         '--provider', node],
        capture_output=True, text=True, timeout=helpers.SAFETY_TIMEOUT,
        env=env)
    assert result.returncode == 0, result.stderr
    assert ironic.traits(node) == {RESERVED}
    assert listener.requests == []


def test_a_missing_ca_bundle_is_named_before_anything_is_sent(
        ironic, node_conf, listener, tmp_path):
    conf = node_conf(ironic_section=ironic.nova_conf_section()
                     + 'cafile = %s\n' % (tmp_path / 'no-such-ca.pem'))
    result = report(conf, 'any-node')
    assert result.returncode == 2
    assert '[ironic] cafile' in last_line(result)
    assert listener.requests == []


def test_remove_takes_off_the_node_what_it_set(ironic, node_conf, listener,
                                               unique):
    """``virt-capabilities remove`` (uninstalling it): what its records
    say it set comes off the Ironic node, nothing else."""
    node = ironic.enroll('bm-remove-' + unique, traits=(INSPECTED,))
    conf = node_conf((RESERVED, 'CUSTOM_GOLD'))
    assert report(conf, node).returncode == 0
    result = subprocess.run(
        [sys.executable, '-m', 'virt_capabilities.cmd.main', 'remove',
         '--config-file', conf, '--provider', node],
        capture_output=True, text=True, timeout=helpers.SAFETY_TIMEOUT,
        env=helpers.clean_env())
    assert result.returncode == 0, result.stderr
    assert ironic.traits(node) == {INSPECTED}
    assert listener.requests == []


def test_a_write_that_stops_half_way_records_what_it_set(ironic, node_conf,
                                                         tmp_path, unique):
    """Ironic takes 50 traits a node (``MAX_TRAITS_PER_NODE``): with 48 of
    the operator's, the reporter's first two traits are set and its third
    is refused (400). Those two are recorded, the third is not: dropped
    from the configuration before any sync succeeds, the two come off and
    the operator's 48 stay."""
    node = ironic.enroll('bm-half-' + unique, available=False)
    operators = {'CUSTOM_OP_%02d' % i for i in range(48)}
    ironic.request('PUT', 'nodes/%s/traits' % node,
                   json={'traits': sorted(operators)})
    mine = ('CUSTOM_HALF_A', 'CUSTOM_HALF_B', 'CUSTOM_HALF_C')
    result = report(node_conf(mine), node)
    assert result.returncode == 1
    assert 'answered 400 to PUT nodes/%s/traits/CUSTOM_HALF_C' % node in (
        result.stderr)
    assert ironic.traits(node) == operators | set(mine[:2])
    state = json.loads((tmp_path / 'virt_capabilities.json').read_text())
    assert list(state['providers'][node].values()) == [list(mine[:2])]
    result = report(node_conf(()), node)
    assert result.returncode == 0, result.stderr
    assert ironic.traits(node) == operators
