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

"""The operator CLI against a real Placement: JSON, exit codes, explain."""

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import types

import pytest
import requests
import sqlalchemy
import yaml

from image_type_common import image_types
from image_type_demo import cmd as demo_cmd
from image_type_demo import fleet
from placement_runner import embedded
from placement_runner import writes
from tests import helpers
from tests.helpers import clean_env

#: The demo's image per family -> the hosts offered (from the demo fleet's
#: traits as Nova 34's drivers, and the reporter, report them).
DEMO_METADATA_HOSTS = {
    # VMware's storage buses come from the reporter (nova-compute reports
    # none): virt_capabilities/metadata_traits.py.
    ('hw_disk_bus', 'scsi'): ['vmware-1', 'vmware-2'],
    ('hw_vif_model', 'e1000e'): ['libvirt-arm-1', 'libvirt-qcow2-1',
                                 'libvirt-qcow2-2'],
    ('hw_video_model', 'qxl'): ['libvirt-qcow2-1', 'libvirt-qcow2-2'],
    # Nova's ironic driver reports no HW_ARCH_* trait (nor does z/VM's,
    # which boots no qcow2): Placement leaves ironic-1 to Nova's
    # ImagePropertiesFilter, as for an i686 image.
    ('hw_architecture', 'aarch64'): ['ironic-1', 'libvirt-arm-1'],
    ('hw_emulation_architecture', 'aarch64'): ['libvirt-arm-1',
                                               'libvirt-qcow2-2'],
    ('hw_viommu_model', 'smmuv3'): ['libvirt-arm-1'],
}


def cli(*args, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, '-m', 'image_type_filter.cmd.main', *args],
        capture_output=True, text=True, timeout=timeout,
        env=env or clean_env())


def sdk_env(server):
    return clean_env(OS_AUTH_TYPE='admin_token', OS_ENDPOINT=server.endpoint,
                     OS_TOKEN=server.token)


def _demo_json_run(private_tmp, backend):
    """``demo -f json`` as a user runs it, with a temporary directory of
    its own: whatever else runs on the machine, only the demo's own
    Placement could leave something there."""
    private_tmp.mkdir()
    return cli('demo', '-f', 'json', '--placement-backend', backend,
               env=clean_env(TMPDIR=str(private_tmp)))


@pytest.fixture(scope='module')
def sqlite_demo_run(tmp_path_factory):
    """One real ``demo -f json`` on the default backend for the module:
    tests only read its result (the process, and its private TMPDIR)."""
    private_tmp = tmp_path_factory.mktemp('demo') / 'tmp'
    return _demo_json_run(private_tmp, 'sqlite'), private_tmp


@pytest.fixture
def demo_run(request, tmp_path, backend):
    if backend == 'sqlite':
        return request.getfixturevalue('sqlite_demo_run')
    private_tmp = tmp_path / 'tmp'
    return _demo_json_run(private_tmp, backend), private_tmp


@pytest.mark.parametrize('backend', helpers.BACKENDS)
def test_demo_json(demo_run):
    proc, private_tmp = demo_run
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    hosts = {h['name']: h for h in result['hosts']}
    assert set(hosts) == {h.name for h in fleet.DEMO_FLEET}
    assert hosts['vmware-1'] == {'name': 'vmware-1',
                                 'compute_driver': 'vmwareapi.VMwareVCDriver',
                                 'formats': ['iso', 'vmdk'],
                                 'reporter_writes': 'provider'}
    # An ironic node's reporter writes its Ironic node (none runs here);
    # its provider still takes what the ironic driver boots.
    assert hosts['ironic-1'] == {'name': 'ironic-1',
                                 'compute_driver': 'ironic.IronicDriver',
                                 'formats': ['ami', 'qcow2', 'raw'],
                                 'reporter_writes': 'Ironic node'}
    assert 'qcow2' not in hosts['libvirt-ceph-1']['formats']
    assert 'qcow2' not in hosts['libvirt-lvm-1']['formats']
    assert 'ploop' in hosts['parallels-1']['formats']
    filtered = [r for r in result['requests'] if r['filter_enabled'] and
                not r['volume_backed'] and not r['image_properties']]
    assert sorted(r['disk_format'] for r in filtered) == list(
        image_types.FORMATS)
    for request in filtered:
        # Untagged images never land on the host set aside for Trove.
        expected = sorted(n for n, h in hosts.items()
                          if request['disk_format'] in h['formats']
                          and n != 'trove-1')
        assert request['candidates'] == expected
        assert (request['reason'] is None) == bool(expected)
    vdi = [r for r in filtered if r['disk_format'] == 'vdi'][0]
    assert vdi['candidates'] == [] and 'No valid host' in vdi['reason']
    trove = [r for r in result['requests']
             if r['image_properties'] == fleet.TROVE_TAG]
    assert trove == [{'disk_format': 'qcow2', 'filter_enabled': True,
                      'volume_backed': False,
                      'image_properties': fleet.TROVE_TAG,
                      'candidates': ['trove-1'], 'reason': None}]
    # One image per image-metadata family: the hosts whose nova-compute
    # (or reporter) reports the trait, among those that boot the format.
    metadata = {tuple(r['image_properties'].items())[0]: r['candidates']
                for r in result['requests'] if r['image_properties']
                and r['image_properties'] != fleet.TROVE_TAG}
    assert metadata == DEMO_METADATA_HOSTS
    off = [r for r in result['requests'] if not r['filter_enabled']]
    assert len(off) == 1 and off[0]['candidates'] == sorted(hosts)
    bfv = [r for r in result['requests'] if r['volume_backed']]
    assert len(bfv) == 1
    assert bfv[0]['candidates'] == sorted(n for n in hosts if n != 'trove-1')
    assert list(private_tmp.iterdir()) == []


def test_candidates_json_through_openstacksdk_env(demo_fleet):
    server, _ = demo_fleet
    proc = cli('candidates', '--disk-format', 'vmdk', '-f', 'json',
               env=sdk_env(server))
    assert proc.returncode == 0, proc.stderr
    assert sorted(r['name'] for r in json.loads(proc.stdout)) == [
        'vmware-1', 'vmware-2']


def test_candidates_explain_names_each_reason(demo_fleet, tmp_path):
    server, hosts = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'ploop', '--resources', 'VCPU=1,MEMORY_MB=512', '--explain',
               '-f', 'json')
    assert proc.returncode == 0, proc.stderr
    rows = {r['name']: r for r in json.loads(proc.stdout)}
    assert set(rows) == {h.name for h in hosts}
    assert rows['parallels-1']['result'] == 'candidate'
    assert rows['vmware-1']['result'] == 'excluded'
    # The term of the query it fails: ploop's trait (os-traits), and the
    # formats the host boots (Nova's VMware driver: iso and vmdk).
    assert rows['vmware-1']['reasons'] == [
        'root_required COMPUTE_IMAGE_TYPE_PLOOP: lacks it (boots: iso, vmdk)']
    # Too big for any host: the resource class that is short, and what each
    # host has free; no host at all is "No valid host" and exit code 3.
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'ploop', '--resources', 'VCPU=1,MEMORY_MB=512,DISK_GB=501',
               '--explain', '-f', 'json')
    assert proc.returncode == 3, proc.stderr
    rows = {r['name']: r for r in json.loads(proc.stdout)}
    assert rows['parallels-1']['reasons'] == [
        'resources DISK_GB:501: needs 501, has 500 free']
    assert rows['vmware-1']['reasons'] == [
        'root_required COMPUTE_IMAGE_TYPE_PLOOP: lacks it (boots: iso, vmdk)',
        'resources DISK_GB:501: needs 501, has 500 free']
    assert 'No valid host: none of' in proc.stderr
    assert 'parallels-1: resources DISK_GB:501: needs 501, has 500 free' \
        in proc.stderr


def test_candidates_no_valid_host_says_why(demo_fleet, tmp_path):
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'vdi')
    assert proc.returncode == 3
    errors = [line for line in proc.stderr.splitlines()
              if line.startswith('ERROR')]
    assert len(errors) == 1
    assert 'No valid host: No compute host boots vdi images ' \
        '(COMPUTE_IMAGE_TYPE_VDI); this cloud boots ' in errors[0]


def test_candidates_trims_the_disk_format_as_glance_does(demo_fleet,
                                                         tmp_path):
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               ' vmdk ', '-f', 'value', '-c', 'name')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ['vmware-1', 'vmware-2']


@pytest.mark.parametrize('resources,says', [
    ('VCPU=1,VCPU=2', 'VCPU is given twice'),
    ('VCPU=99999999999999999999', 'from 1 to 2147483647'),
    ('CUSTOM_GPU=1', 'Placement knows no resource class CUSTOM_GPU'),
    ('VCPU=' + 'x' * 100000, 'is not CLASS=AMOUNT'),
])
def test_candidates_input_refused_in_one_short_line(demo_fleet, tmp_path,
                                                    resources, says):
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    before = len(server.requests_seen())
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'raw', '--resources', resources)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and says in lines[0] and len(lines[0]) < 400
    # At most the one listing of resource classes reached Placement.
    assert all('allocation_candidates' not in line
               for line in server.requests_seen()[before:])


def test_a_trait_image_property_is_honoured_as_nova_does_without_isolation(
        demo_fleet, tmp_path):
    """Nova requires an image's trait:X=required on every boot, whatever
    the filters; exactly 'required' (nova/objects/image_meta.py)."""
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'raw', '--image-property', 'trait:CUSTOM_TROVE=required',
               '-f', 'value', '-c', 'name')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ['trove-1']
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'raw', '--image-property', 'trait:CUSTOM_TROVE=REQUIRED',
               '-f', 'value', '-c', 'name')
    assert proc.returncode == 0, proc.stderr
    assert 'trove-1' in proc.stdout.split()
    assert len(proc.stdout.split()) > 1  # not honoured: every raw host


def test_a_trait_nobody_has_is_no_valid_host_naming_it(demo_fleet,
                                                       tmp_path):
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'raw', '--image-property', 'trait:CUSTOM_GOLD=required')
    assert proc.returncode == 3, proc.stderr
    assert 'CUSTOM_GOLD' in proc.stderr.splitlines()[-1]


def test_volume_backed_asks_for_no_disk_as_nova_does(demo_fleet, tmp_path):
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    before = len(server.requests_seen())
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'vmdk', '--volume-backed')
    assert proc.returncode == 0, proc.stderr
    asked = [line for line in server.requests_seen()[before:]
             if 'allocation_candidates' in line]
    assert len(asked) == 1
    assert 'VCPU' in asked[0] and 'DISK_GB' not in asked[0]


def status(conf, *args):
    proc = cli('status', '--config-file', str(conf), '-f', 'json', *args)
    return proc.returncode, {row['check']: row for row in
                             json.loads(proc.stdout or '[]')}, proc


def test_status_exit_codes(tmp_path):
    conf = tmp_path / 'nova.conf'
    nodes = 'Compute nodes report image types'
    with embedded.EmbeddedPlacement() as server:
        conf.write_text(server.nova_conf_section())
        # No compute node at all: a warning.
        code, rows, proc = status(conf)
        assert code == 1, proc.stderr
        assert rows[nodes]['result'] == 'Warning'
        hosts = fleet.build(server, fleet.demo_fleet()[:3])
        code, rows, proc = status(conf)
        assert code == 0, proc.stderr
        assert rows[nodes]['details'] == (
            'all 3 compute node(s) report (compute nodes found by the '
            'COMPUTE_NODE trait)')
        formats = rows['Image formats']['details']
        assert 'qcow2: 2' in formats
        assert 'vmdk' in formats.split('no host boots: ')[1]
        # A compute node that has not reported yet: not ready.
        client = server.client()
        fleet.create_provider(client, 'new-node', fleet.DEFAULT_INVENTORY)
        code, rows, proc = status(conf)
        assert code == 2, proc.stderr
        assert rows[nodes]['result'] == 'Failure'
        assert ': new-node.' in rows[nodes]['details']
        # A bare-metal node: COMPUTE_NODE and only custom inventory.
        uuid = client.list_resource_providers(name='new-node')[0]['uuid']
        traits, generation = client.get_provider_traits(uuid)
        client.put_provider_traits(uuid, traits | {'COMPUTE_IMAGE_TYPE_RAW'},
                                   generation)
        writes.create_resource_class(client, 'CUSTOM_BAREMETAL_GOLD')
        fleet.create_provider(client, 'ironic-node', {
            'CUSTOM_BAREMETAL_GOLD': {'total': 1}})
        code, rows, proc = status(conf)
        assert code == 2, proc.stderr
        assert ': ironic-node.' in rows[nodes]['details']
        uuid = client.list_resource_providers(name='ironic-node')[0]['uuid']
        traits, generation = client.get_provider_traits(uuid)
        client.put_provider_traits(uuid, traits | {'COMPUTE_IMAGE_TYPE_RAW'},
                                   generation)
        # A nested tree: the compute nodes are still its roots, all ready.
        writes.create_resource_provider(client, 'numa0', parent=hosts[0].uuid)
        code, rows, proc = status(conf)
        assert code == 0, proc.stderr
        assert rows[nodes]['details'].startswith('all 5 compute node(s)')


def test_status_counts_only_providers_with_the_compute_node_trait(
        fresh_placement, tmp_path):
    """Every supported Nova marks its compute nodes COMPUTE_NODE; a
    provider without it (a sharing or custom one) is no compute node."""
    client = fresh_placement.client()
    fleet.create_provider(client, 'not-a-node', fleet.DEFAULT_INVENTORY,
                          traits=())
    conf = tmp_path / 'nova.conf'
    conf.write_text(fresh_placement.nova_conf_section())
    code, rows, proc = status(conf)
    assert code == 1, proc.stderr
    assert rows['Compute nodes report image types']['details'] == (
        'no compute node found (compute nodes found by the COMPUTE_NODE '
        'trait)')


@pytest.mark.parametrize('fmt', ['table', 'value', 'csv', 'yaml'])
def test_status_every_output_format_is_text(demo_fleet, tmp_path, fmt):
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    proc = cli('status', '--config-file', str(conf), '-f', fmt)
    assert proc.returncode == 0, proc.stderr
    assert 'no host boots: vdi' in proc.stdout
    assert "['" not in proc.stdout  # no Python reprs


def test_both_commands_and_status_say_which_build_runs(demo_fleet,
                                                      tmp_path):
    """--version of both commands and status' first row give the version
    pbr wrote into the installed package's metadata (from git: its .devN
    says the commit; tests/repository/test_build_release.py checks the
    number), as a process of the installation reads it."""
    def script(name, *args):
        # The console scripts pip installed beside this Python.
        return subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), name), *args],
            capture_output=True, text=True, timeout=120, env=clean_env())

    # -I: the installation's metadata, as a console script sees it (no
    # working directory on the path).
    installed = subprocess.run(
        [sys.executable, '-I', '-c', 'from importlib import metadata; '
         'print(metadata.version("image-type-filter"))'],
        capture_output=True, text=True, timeout=60,
        env=clean_env()).stdout.strip()
    assert re.fullmatch(r'\d+\.\d+\.\d+(\.dev\d+)?', installed)
    for name in ('image-type-filter', 'virt-capabilities'):
        proc = script(name, '--version')
        assert (proc.returncode, proc.stdout) == (
            0, '%s %s\n' % (name, installed)), proc.stderr
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    proc = script('image-type-filter', 'status', '--config-file', str(conf),
                  '-f', 'json')
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert rows[0] == {
        'check': 'Version', 'result': 'Success',
        'details': 'image-type-filter %s, configuration read from %s'
        % (installed, conf)}


def test_status_that_could_not_check_says_why_in_one_line(tmp_path):
    """255 (nova-status's "could not check") when Placement cannot be
    asked; 2, as in every command, when the configuration, credentials or
    command line is wrong."""
    conf = tmp_path / 'nova.conf'
    conf.write_text('[placement]\nauth_type = admin_token\n'
                    'endpoint = http://127.0.0.1:9\ntoken = admin\n'
                    'connect_retries = 1\nconnect_retry_delay = 0.1\n')
    for args, code in ((['--config-file', str(conf)], 255), ([], 2),
                       (['--config-file', '/nonexistent/nova.conf'], 2)):
        proc = cli('status', *args)
        assert proc.returncode == code, (args, proc.stderr)
        errors = [line for line in proc.stderr.splitlines()
                  if line.startswith('ERROR')]
        assert len(errors) == 1, proc.stderr
        # "could not check" only where it could not: a configuration to
        # fix says what it is.
        assert ('could not check: ' in errors[0]) is (code == 255), errors
        assert 'Traceback' not in proc.stderr
    assert errors[0] == (
        'ERROR image-type-filter: config file /nonexistent/nova.conf does '
        'not exist or is not readable (No such file or directory)'), errors
    proc = cli('--debug', 'status', '--config-file', str(conf))
    assert 'Traceback' in proc.stderr
    proc = cli('status', '--no-such-flag')
    assert proc.returncode == 2 and '--no-such-flag' in proc.stderr


def test_candidates_with_placement_unreachable_is_one_line_exit_1(tmp_path):
    conf = tmp_path / 'nova.conf'
    conf.write_text('[placement]\nauth_type = admin_token\n'
                    'endpoint = http://127.0.0.1:9\ntoken = admin\n'
                    'connect_retries = 1\nconnect_retry_delay = 0.1\n')
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'raw')
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines()
              if line.startswith('ERROR')]
    assert len(errors) == 1 and 'cannot reach Placement' in errors[0]


@pytest.mark.parametrize('args,message', [
    (['candidates', '--disk-format', 'raw', '--resources', 'VCPU=x'],
     'is not CLASS=AMOUNT'),
    (['candidates', '--disk-format', 'raw', '--image-property', 'novalue'],
     'is not KEY=VALUE'),
    (['candidates', '--disk-format', 'raw'], 'no Placement credentials'),
    (['candidates', '--disk-format', 'raw', '--config-file',
      '/nonexistent/nova.conf'], 'does not exist'),
])
def test_bad_usage_exits_2_with_one_line(args, message):
    proc = cli(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert 'Traceback' not in proc.stderr


def _demo_output(document, *args):
    """What ``demo ARGS`` prints for the real demo's ``document``: the
    command's own -c check and formatting (tests/unit/image_type_demo/
    test_cmd.py's seam), in this process. The module's real runs already
    show the command printing its document (-f json here, the default
    table in test_demo_view.py); this shows each other formatter on the
    real fleet's answers without a demo, and its Placement, per format."""
    out = io.StringIO()
    demo = demo_cmd.Demo(types.SimpleNamespace(stdout=out), None)
    parsed_args = demo.get_parser('image-type-filter demo').parse_args(args)
    demo.formatter = demo._formatter_plugins[parsed_args.formatter].obj
    demo_cmd.tables(parsed_args, {'hosts': [], 'requests': []})
    demo.produce_output(parsed_args, ('hosts', 'requests'),
                        (document['hosts'], document['requests']))
    return out.getvalue()


@pytest.mark.parametrize('fmt', ['yaml', 'value', 'csv'])
def test_demo_every_output_format(sqlite_demo_run, fmt):
    """Through cliff's formatters: yaml the whole document, value and csv
    the boot requests (with cliff's -c and csv quoting)."""
    args = {'yaml': (), 'value': ('-c', 'disk_format', '-c', 'hosts'),
            'csv': ('--quote', 'all')}[fmt]
    proc, _ = sqlite_demo_run
    assert proc.returncode == 0, proc.stderr
    stdout = _demo_output(json.loads(proc.stdout), '-f', fmt, *args)
    assert "['" not in stdout
    if fmt == 'yaml':
        document = yaml.safe_load(stdout)
        assert set(document) == {'hosts', 'requests'}
        assert {'name': 'vmware-2', 'compute_driver':
                'vmwareapi.VMwareVCDriver', 'formats': ['iso', 'vmdk'],
                'reporter_writes': 'provider'} in document['hosts']
        vmdk = [r for r in document['requests']
                if r['disk_format'] == 'vmdk' and r['filter_enabled']
                and not r['volume_backed']]
        assert vmdk[0]['candidates'] == ['vmware-1', 'vmware-2']
    elif fmt == 'value':
        lines = stdout.splitlines()
        assert 'ploop parallels-1' in lines
        assert 'vmdk vmware-1, vmware-2' in lines
    else:
        lines = stdout.splitlines()
        assert lines[0] == ('"disk_format","image properties","filters",'
                            '"volume-backed","hosts"')
        assert '"vmdk","-","on","no","vmware-1, vmware-2"' in lines


@pytest.mark.parametrize('args,says', [
    (('-f', 'json', '-c', 'hosts'), '-f json gives the whole document'),
    (('-f', 'csv', '-c', 'compute_driver'),
     '-f csv shows no column compute_driver'),
])
def test_demo_columns_it_cannot_show_are_one_line_exit_2(tmp_path, args,
                                                         says):
    private_tmp = _private_tmp(tmp_path)
    proc = cli('demo', *args, env=clean_env(TMPDIR=str(private_tmp)))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], lines
    # Refused before anything started.
    assert proc.stdout == '' and list(private_tmp.iterdir()) == []


def test_demo_serve_keeps_placement_for_hands_on_use_until_ctrl_c():
    with helpers.Child.module('image_type_filter.cmd.main', 'demo',
                              '--serve', '-f', 'json') as child:
        child.err.wait_for('OS_ENDPOINT=')
        line = [li for li in child.err.text().splitlines()
                if 'OS_ENDPOINT=' in li][0]
        env = dict(pair.split('=', 1) for pair in
                   line.split('export ', 1)[1].split())
        proc = cli('candidates', '--disk-format', 'vmdk', '-f', 'value',
                   '-c', 'name', env=clean_env(**env))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ['vmware-1', 'vmware-2']
        child.send(signal.SIGINT)
        assert child.finish() == 0, child.err.text()
    assert json.loads(child.out.text())['hosts']  # stdout stayed JSON
    with pytest.raises(requests.ConnectionError):
        requests.get(env['OS_ENDPOINT'], timeout=10)


def openstack(server, *args):
    """The real openstack client with this project's plugin, on its own
    --os-* options (no clouds.yaml, no OS_* from the environment)."""
    return subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'openstack'),
         '--os-auth-type', 'admin_token', '--os-endpoint', server.endpoint,
         '--os-token', server.token, *args],
        capture_output=True, text=True, timeout=120, env=clean_env())


@pytest.mark.slow
def test_openstack_client_plugin_same_output_and_exit_codes(demo_fleet,
                                                            tmp_path):
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section())
    explain = ['candidates', '--disk-format', 'ploop', '--explain']
    for args in (explain, ['status']):
        ours = cli(*args, '--config-file', str(conf), '-f', 'json')
        theirs = openstack(server, 'image-type', *args, '-f', 'json')
        assert theirs.returncode == ours.returncode == 0, theirs.stderr
        ours, theirs = json.loads(ours.stdout), json.loads(theirs.stdout)
        if args == explain:
            explained = ours
        else:
            # status's Version row names what each read: nova.conf here,
            # the --os-* options alone (no file) through the plugin.
            version = ours[0]['details'].partition(', ')[0]
            assert ours.pop(0)['details'] == (
                '%s, configuration read from %s' % (version, conf))
            assert theirs.pop(0)['details'] == (
                '%s, configuration read from no file' % version)
        assert theirs == ours
    # yaml's dumper is taught the lists that print as text (the explain
    # reasons) on the openstack client's App too.
    theirs = openstack(server, 'image-type', *explain, '-f', 'yaml')
    assert theirs.returncode == 0, theirs.stderr
    assert yaml.safe_load(theirs.stdout) == explained
    proc = openstack(server, 'image-type', 'candidates', '--disk-format',
                     'vdi')
    assert proc.returncode == 3
    assert 'No valid host: No compute host boots vdi images ' \
        '(COMPUTE_IMAGE_TYPE_VDI)' in proc.stderr
    proc = openstack(server, 'image-type', 'candidates', '--disk-format',
                     'raw', '--resources', 'VCPU=1,VCPU=2')
    assert proc.returncode == 2
    assert 'VCPU is given twice' in proc.stderr


@pytest.mark.parametrize('enabled', ['True', 'False'])
def test_a_bad_isolation_rule_is_reported_as_itself(listener, tmp_path,
                                                    enabled):
    conf = tmp_path / 'nova.conf'
    conf.write_text(listener.nova_conf_section() + '[image_isolation]\n'
                    'enabled = %s\nrules = trove=true:TROVE\n' % enabled)
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'raw')
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, lines
    assert "[image_isolation] rules: 'trove=true:TROVE' is not" in lines[0]
    assert 'unknown filter' not in lines[0]
    assert listener.requests == []


# -- an operator's first hour -----------------------------------------------

def _private_tmp(tmp_path):
    """A TMPDIR of the test's own that nobody may read but all may
    traverse (so even as root the demo's PostgreSQL cluster lives here):
    whatever the demo leaves behind shows up in it."""
    private_tmp = tmp_path / 'tmp'
    private_tmp.mkdir()
    os.chmod(private_tmp, 0o711)  # noqa: S103 - traverse only
    return private_tmp


def test_demo_too_many_workers_is_one_line_exit_2(tmp_path):
    private_tmp = _private_tmp(tmp_path)
    proc = cli('demo', '--placement-backend', 'postgresql',
               '--placement-workers', '99999',
               env=clean_env(TMPDIR=str(private_tmp)))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        'ERROR image-type-filter: --placement-workers must be from 1 to '
        '64, not 99999']
    assert proc.stdout == '' and list(private_tmp.iterdir()) == []


@pytest.mark.parametrize('url,code,says', [
    ('postgresql+psycopg2://x:s3cret$pw@127.0.0.1:1/nope', 1,
     'cannot connect to the database postgresql+psycopg2://x:***@'
     '127.0.0.1:1/nope: '),
    ('nonsense://x:s3cret$pw@', 2, 'database URL nonsense://x:***@: '),
    ('not a url s3cret$pw', 2, 'is not a SQLAlchemy URL'),
])
def test_demo_bad_database_url_is_one_line(tmp_path, url, code, says):
    # From the environment, where the password is off the process list.
    private_tmp = _private_tmp(tmp_path)
    proc = cli('demo', env=clean_env(
        TMPDIR=str(private_tmp), IMAGE_TYPE_FILTER_DEMO_DATABASE_URL=url))
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], lines
    assert 's3cret' not in proc.stderr and proc.stdout == ''
    assert list(private_tmp.iterdir()) == []


@pytest.mark.slow
def test_demo_twice_on_a_kept_database_reuses_its_hosts(unique):
    import tempfile

    from placement_runner import postgres
    where = tempfile.mkdtemp(prefix='test-database-')
    database = postgres.PrivatePostgres(where)
    url = database.start()
    try:
        runs = [cli('demo', '-f', 'json', '--placement-database-url', url,
                    '--placement-workers', '1') for _ in range(2)]
        for proc in runs:
            assert proc.returncode == 0, proc.stderr[-2000:]
        first, second = (json.loads(proc.stdout) for proc in runs)
        assert second == first
        # What the database kept, read from it directly (no third
        # Placement): the demo's hosts, once each.
        engine = sqlalchemy.create_engine(
            url, poolclass=sqlalchemy.pool.NullPool)
        try:
            with engine.connect() as connection:
                names = connection.execute(sqlalchemy.text(
                    'SELECT name FROM resource_providers')).scalars().all()
        finally:
            engine.dispose()
        assert sorted(names) == sorted(h.name for h in fleet.DEMO_FLEET)
    finally:
        database.stop()
        shutil.rmtree(where)


def _serve(*args, env=None):
    return helpers.Child.module('image_type_filter.cmd.main', *args,
                                env=env)


def _server_pid(child):
    servers = [p for p in helpers.descendants(child.process.pid)
               if b'placement_runner.server' in _cmdline(p)]
    assert len(servers) == 1
    return servers[0]


def _cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read()
    except FileNotFoundError:
        return b''


def _nova_conf_printed(child):
    """The nova.conf the serving demo printed (to stderr with -f json)."""
    child.err.wait_for('OS_ENDPOINT=')
    text = child.err.text()
    block = text.split('In a nova.conf (--config-file):\n', 1)[1]
    return block.split('\n\n', 1)[0] + '\n'


def test_demo_serve_prints_a_complete_nova_conf(tmp_path):
    with _serve('demo', '--serve', '-f', 'json') as child:
        conf = tmp_path / 'nova.conf'
        conf.write_text(_nova_conf_printed(child))
        proc = cli('candidates', '--config-file', str(conf),
                   '--disk-format', 'qcow2', '-f', 'value', '-c', 'name')
        assert proc.returncode == 0, proc.stderr
        offered = proc.stdout.split()
        assert 'libvirt-qcow2-1' in offered
        assert 'trove-1' not in offered  # [image_isolation] came along
        proc = cli('candidates', '--config-file', str(conf),
                   '--disk-format', 'vmdk', '-f', 'value', '-c', 'name')
        assert proc.stdout.split() == ['vmware-1', 'vmware-2']
        child.send(signal.SIGINT)
        assert child.finish() == 0, child.err.text()


def test_demo_serve_stops_when_its_placement_dies():
    with _serve('demo', '--serve', '-f', 'json') as child:
        child.err.wait_for('OS_ENDPOINT=')
        pid = _server_pid(child)
        assert '(pid %d)' % pid in child.err.text()
        os.kill(pid, signal.SIGKILL)
        assert child.finish() == 1
    errors = [li for li in child.err.text().splitlines()
              if li.startswith('ERROR')]
    assert errors == ["ERROR image-type-filter: the demo's Placement "
                      "(pid %d) exited with code -9 while serving; "
                      "stopping" % pid]


def _wait_for_phase(child, phase):
    if phase == 'starting':
        helpers.wait_until(
            lambda: any(b'gunicorn' in _cmdline(p) for p in
                        helpers.descendants(child.process.pid)),
            'gunicorn starts')
    elif phase == 'building':
        child.err.wait_for('traits added')
    else:
        child.err.wait_for('OS_ENDPOINT=')


@pytest.mark.slow
@pytest.mark.parametrize('phase,signals', [
    ('starting', [signal.SIGINT]),
    ('building', [signal.SIGTERM]),
    ('serving', [signal.SIGINT]),
    # An impatient operator: Ctrl-C, and again while it stops.
    ('serving', [signal.SIGINT, signal.SIGTERM]),
])
def test_demo_stopped_at_any_phase_leaves_no_process(tmp_path, phase,
                                                     signals):
    private_tmp = _private_tmp(tmp_path)
    with _serve('-v', '-v', 'demo', '--serve', '-f', 'json',
                '--placement-backend', 'postgresql',
                '--placement-workers', '1',
                env=clean_env(TMPDIR=str(private_tmp))) as child:
        _wait_for_phase(child, phase)
        before = helpers.descendants(child.process.pid)
        assert before
        child.send(signals[0])
        if len(signals) > 1:
            child.err.wait_for('stopping the demo')
            child.send(signals[1])
        assert child.finish() in (0, 128 + signals[0]), child.err.text()
    # The demo returned once everything it started was gone.
    assert [(p, _cmdline(p)) for p in before if helpers.pid_alive(p)] == []
    assert list(private_tmp.iterdir()) == []
