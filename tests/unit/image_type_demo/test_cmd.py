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

"""The demo's document goes out through cliff's formatter plugins only.

A hand-written document, so the expected output is this file's own: each
format is checked for what only that cliff formatter does (its options,
its quoting, its key order), which a second printing path would not.
"""

import csv
import io
import json
import types

import pytest
import yaml

from image_type_common import exceptions
from image_type_demo import cmd

DOCUMENT = {
    'hosts': [
        {'name': 'vmware-1', 'compute_driver': 'vmwareapi.VMwareVCDriver',
         'formats': ['iso', 'vmdk'], 'reporter_writes': 'provider'},
        {'name': 'zvm-1', 'compute_driver': 'zvm.ZVMDriver',
         'formats': ['raw'], 'reporter_writes': 'provider'},
    ],
    'requests': [
        {'disk_format': 'vmdk', 'filter_enabled': True,
         'volume_backed': False, 'image_properties': {},
         'candidates': ['vmware-1'], 'reason': None},
        {'disk_format': 'vmdk', 'filter_enabled': False,
         'volume_backed': True,
         'image_properties': {'trait:CUSTOM_TROVE': 'required'},
         'candidates': ['vmware-1', 'zvm-1'], 'reason': None},
        {'disk_format': 'vdi', 'filter_enabled': True,
         'volume_backed': False, 'image_properties': {}, 'candidates': [],
         'reason': 'No valid host: nobody boots vdi'},
    ],
}


def render(*args):
    """What ``demo ARGS`` prints for DOCUMENT: stdout, after -c is checked
    the way the command checks it before starting anything."""
    out = io.StringIO()
    demo = cmd.Demo(types.SimpleNamespace(stdout=out), None)
    parsed_args = demo.get_parser('image-type-filter demo').parse_args(args)
    demo.formatter = demo._formatter_plugins[parsed_args.formatter].obj
    cmd.tables(parsed_args, {'hosts': [], 'requests': []})
    demo.produce_output(parsed_args, ('hosts', 'requests'),
                        (DOCUMENT['hosts'], DOCUMENT['requests']))
    return out.getvalue()


def test_the_formats_are_cliffs_own():
    demo = cmd.Demo(types.SimpleNamespace(stdout=io.StringIO()), None)
    action = [a for a in demo.get_parser('demo')._actions
              if '-f' in a.option_strings][0]
    assert sorted(action.choices) == ['csv', 'json', 'table', 'value', 'yaml']
    assert action.default == 'table'


def test_json_is_the_whole_document_unchanged():
    assert json.loads(render('-f', 'json')) == DOCUMENT
    assert render('-f', 'json') == json.dumps(DOCUMENT, indent=2) + '\n'


def test_json_takes_cliffs_noindent():
    text = render('-f', 'json', '--noindent')
    assert text.count('\n') == 1 and json.loads(text) == DOCUMENT


def test_yaml_is_the_whole_document_with_sorted_keys():
    text = render('-f', 'yaml')
    assert yaml.safe_load(text) == DOCUMENT
    # cliff's YAML formatter sorts keys: compute_driver before name.
    assert text.startswith('hosts:\n- compute_driver: vmwareapi.VMware')


def test_table_is_hosts_then_a_matrix_then_the_refusals():
    text = render()
    hosts, matrix, refused, rest = text.split('\n\n')
    assert rest == ''
    assert hosts.splitlines()[0] == (
        'Hosts (each reported from its own nova.conf):')
    assert '| 1 | vmware-1 | vmwareapi.VMwareVCDriver | iso, vmdk |' in hosts
    assert '| 2 | zvm-1    | zvm.ZVMDriver            | raw       |' in hosts
    assert matrix.splitlines()[0] == (
        'Which host takes which boot request (x: offered; VCPU:1, '
        'MEMORY_MB:512, DISK_GB:5):')
    rows = [[cell.strip() for cell in line.split('|')[1:-1]]
            for line in matrix.splitlines() if line.startswith('| ')]
    assert rows == [
        ['boot request', '1', '2'],
        ['vmdk', 'x', ''],
        ['vmdk trait:CUSTOM_TROVE=required volume-backed filters off',
         'x', 'x'],
        ['vdi', '', ''],
    ]
    assert refused.splitlines()[0] == 'Boot requests no host takes:'
    assert '| vdi          | No valid host: nobody boots vdi |' in refused


def test_table_reasons_wrap_to_100_columns():
    document = dict(DOCUMENT, requests=[dict(
        DOCUMENT['requests'][2], reason='No valid host: ' + 'why ' * 60)])
    out = io.StringIO()
    demo = cmd.Demo(types.SimpleNamespace(stdout=out), None)
    parsed_args = demo.get_parser('demo').parse_args([])
    demo.formatter = demo._formatter_plugins['table'].obj
    demo.produce_output(parsed_args, ('hosts', 'requests'),
                        (document['hosts'], document['requests']))
    assert max(len(line) for line in out.getvalue().splitlines()) <= 100


def test_table_takes_cliffs_max_width():
    def widest(text):  # of the tables' own lines (not their titles)
        return max(len(line) for line in text.splitlines()
                   if line[:1] in '+|')
    assert widest(render('--max-width', '60')) < widest(render())


def test_value_is_the_boot_requests():
    assert render('-f', 'value').splitlines() == [
        'vmdk - on no vmware-1',
        'vmdk trait:CUSTOM_TROVE=required off yes vmware-1, zvm-1',
        'vdi - on no No valid host: nobody boots vdi',
    ]


def test_csv_is_the_boot_requests_quoted_as_cliff_quotes():
    text = render('-f', 'csv')
    # cliff's default quoting, nonnumeric: every text cell quoted.
    assert text.splitlines()[0] == (
        '"disk_format","image properties","filters","volume-backed","hosts"')
    assert list(csv.reader(io.StringIO(text)))[1:] == [
        ['vmdk', '-', 'on', 'no', 'vmware-1'],
        ['vmdk', 'trait:CUSTOM_TROVE=required', 'off', 'yes',
         'vmware-1, zvm-1'],
        ['vdi', '-', 'on', 'no', 'No valid host: nobody boots vdi'],
    ]
    assert render('-f', 'csv', '--quote', 'minimal').splitlines()[1] == (
        'vmdk,-,on,no,vmware-1')


def test_columns_pick_from_each_table():
    assert render('-f', 'value', '-c', 'disk_format', '-c', 'Hosts'
                  ).splitlines() == [
        'vmdk vmware-1', 'vmdk vmware-1, zvm-1',
        'vdi No valid host: nobody boots vdi']
    hosts_only = render('-c', 'host', '-c', 'formats')
    assert 'Boot requests' not in hosts_only
    assert '| zvm-1    | raw       |' in hosts_only


@pytest.mark.parametrize('args,says', [
    (('-f', 'json', '-c', 'hosts'), '-f json gives the whole document'),
    (('-f', 'yaml', '-c', 'disk_format'), '-f yaml gives the whole document'),
    (('-f', 'value', '-c', 'host'), '-f value shows no column host'),
    (('-c', 'nosuch'), '-f table shows no column nosuch'),
])
def test_columns_that_cannot_be_shown_are_refused(args, says):
    with pytest.raises(exceptions.ConfigError, match=says):
        render(*args)


def test_table_says_where_an_ironic_hosts_reporter_writes(monkeypatch):
    ironic = {'name': 'ironic-1', 'compute_driver': 'ironic.IronicDriver',
              'formats': ['ami', 'qcow2', 'raw'],
              'reporter_writes': 'Ironic node'}
    monkeypatch.setitem(DOCUMENT, 'hosts', DOCUMENT['hosts'] + [ironic])
    hosts = render().split('\n\n')[0]
    assert hosts.splitlines()[-3:] == [
        'ironic-1: the reporter keeps an ironic node\'s custom traits on its '
        'Ironic node, and nova-compute',
        'copies them to the provider, with the image-type traits it keeps '
        'itself; this demo runs no Ironic,',
        'so the provider has nova-compute\'s traits only.']
    # No note for the hosts whose reporter writes their provider.
    assert 'vmware-1:' not in hosts and 'zvm-1:' not in hosts
