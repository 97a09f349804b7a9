"""The operator CLI against a real Placement: JSON, exit codes, explain."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from image_type_common import image_types
from image_type_filter.harness import embedded
from image_type_filter.harness import fleet
from tests.helpers import clean_env

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def cli(*args, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, '-m', 'image_type_filter.cmd.main', *args],
        capture_output=True, text=True, timeout=timeout,
        env=env or clean_env())


def sdk_env(server):
    return clean_env(OS_AUTH_TYPE='admin_token', OS_ENDPOINT=server.endpoint,
                     OS_TOKEN=server.token)


def test_demo_json(tmp_path):
    # A temporary directory of its own: whatever else runs on the machine,
    # only the demo's own Placement could leave something here.
    private_tmp = tmp_path / 'tmp'
    private_tmp.mkdir()
    proc = cli('demo', '-f', 'json', env=clean_env(TMPDIR=str(private_tmp)))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    hosts = {h['name']: h for h in result['hosts']}
    assert set(hosts) == {h.name for h in fleet.DEMO_FLEET}
    assert hosts['vmware-1'] == {'name': 'vmware-1',
                                 'compute_driver': 'vmwareapi.VMwareVCDriver',
                                 'formats': ['iso', 'vmdk']}
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
    trove = [r for r in result['requests'] if r['image_properties']]
    assert trove == [{'disk_format': 'qcow2', 'filter_enabled': True,
                      'volume_backed': False,
                      'image_properties': fleet.TROVE_TAG,
                      'candidates': ['trove-1'], 'reason': None}]
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
    assert rows['vmware-1']['reasons'] == [
        'lacks COMPUTE_IMAGE_TYPE_PLOOP (boots: iso, vmdk)']
    # Too big for any host: capacity is named too.
    proc = cli('candidates', '--config-file', str(conf), '--disk-format',
               'ploop', '--resources', 'VCPU=1000', '--explain', '-f',
               'json')
    rows = {r['name']: r for r in json.loads(proc.stdout)}
    assert rows['parallels-1']['reasons'] == ['lacks capacity for VCPU:1000']
    assert rows['vmware-1']['reasons'] == [
        'lacks COMPUTE_IMAGE_TYPE_PLOOP (boots: iso, vmdk)',
        'lacks capacity for VCPU:1000']


def test_status_exit_codes(tmp_path):
    conf = tmp_path / 'nova.conf'
    with embedded.EmbeddedPlacement() as server:
        conf.write_text(server.nova_conf_section())
        # No compute node at all: a warning.
        proc = cli('status', '--config-file', str(conf), '-f', 'json')
        assert proc.returncode == 1, proc.stderr
        assert json.loads(proc.stdout)['result'] == 'Warning'
        hosts = fleet.build(server, fleet.demo_fleet()[:3])
        proc = cli('status', '--config-file', str(conf), '-f', 'json')
        assert proc.returncode == 0, proc.stderr
        status = json.loads(proc.stdout)
        assert status['not_reporting'] == []
        assert status['compute_nodes'] == 3
        assert status['hosts_per_format']['qcow2'] == 2
        assert 'vmdk' in status['unsupported_formats']
        assert status['flat'] is True
        # A compute node that has not reported yet: failure.
        fleet.create_provider(server.client(), 'new-node',
                              fleet.DEFAULT_INVENTORY)
        proc = cli('status', '--config-file', str(conf), '-f', 'json')
        assert proc.returncode == 2, proc.stderr
        status = json.loads(proc.stdout)
        assert status['not_reporting'] == ['new-node']
        assert status['result'] == 'Failure'
        # A nested tree while the "required" form is configured: warning.
        server.client().create_resource_provider('numa0',
                                                 parent=hosts[0].uuid)
        client = server.client()
        uuid = client.list_resource_providers(name='new-node')[0]['uuid']
        traits, generation = client.get_provider_traits(uuid)
        client.put_provider_traits(uuid, traits | {'COMPUTE_IMAGE_TYPE_RAW'},
                                   generation)
        conf.write_text(server.nova_conf_section() + '[scheduler]\n'
                        'image_type_trait_parameter = required\n')
        proc = cli('status', '--config-file', str(conf))
        assert proc.returncode == 1, proc.stderr
        assert 'not flat (nested providers)' in proc.stdout


def test_placement_unreachable_is_one_line_exit_1(tmp_path):
    conf = tmp_path / 'nova.conf'
    conf.write_text('[placement]\nauth_type = admin_token\n'
                    'endpoint = http://127.0.0.1:9\ntoken = admin\n'
                    'connect_retries = 1\nconnect_retry_delay = 0.1\n')
    proc = cli('status', '--config-file', str(conf))
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines()
              if line.startswith('ERROR')]
    assert len(errors) == 1 and 'cannot reach Placement' in errors[0]
    assert 'Traceback' not in proc.stderr
    proc = cli('--debug', 'status', '--config-file', str(conf))
    assert 'Traceback' in proc.stderr


@pytest.mark.parametrize('args,message', [
    (['candidates', '--disk-format', 'raw', '--resources', 'VCPU=x'],
     'is not CLASS=AMOUNT'),
    (['candidates', '--disk-format', 'raw', '--image-property', 'novalue'],
     'is not KEY=VALUE'),
    (['status'], 'no Placement credentials'),
    (['status', '--config-file', '/nonexistent/nova.conf'],
     'does not exist'),
])
def test_bad_usage_exits_2_with_one_line(args, message):
    proc = cli(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert 'Traceback' not in proc.stderr


def readme_command(marker):
    with open(os.path.join(REPO, 'README.md')) as f:
        text = f.read()
    match = re.search(r'<!-- %s -->\n```\n(.+?)\n```' % marker, text)
    assert match, 'README has no %s block' % marker
    return match.group(1)


@pytest.mark.slow
def test_readme_main_command_exactly_as_written(tmp_path):
    """Copy the tracked tree and run README's main command in it."""
    command = readme_command('main-command')
    files = subprocess.run(['git', 'ls-files', '-co', '--exclude-standard'],
                           cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    copy = tmp_path / 'clone'
    for name in files:
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if os.path.isfile(os.path.join(REPO, name)):
            shutil.copy2(os.path.join(REPO, name), target)
    proc = subprocess.run(['bash', '-c', command], cwd=copy,
                          capture_output=True, text=True, timeout=900,
                          env=clean_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'vmware-1, vmware-2' in proc.stdout
    assert 'No valid host' in proc.stdout
