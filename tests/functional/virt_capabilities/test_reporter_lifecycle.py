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

"""A reporter an operator can monitor and undo, against a real Placement:
``report --check`` and ``--dry-run`` exit codes, the status file each sync
leaves, ``remove``, and a service that outlives refused credentials."""

import json
import signal
import subprocess
import sys

from image_type_common import image_types
from placement_runner import writes
from tests import helpers
from virt_capabilities import ownership_state

T = image_types.TRAIT_BY_FORMAT
FAKE = '[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = %s\n'
DRIFT = 3  # virt-capabilities report --check / --dry-run: literal, not ours


def run_cli(*args):
    return subprocess.run([sys.executable, '-m', 'virt_capabilities.cmd.main',
                           *args], capture_output=True, text=True,
                          timeout=120, env=helpers.clean_env())


def node(tmp_path, placement, name, extra='', file='nova.conf'):
    """A fake-driver node named ``name`` (its provider's name), with its
    state under tmp_path."""
    path = tmp_path / file
    path.write_text(FAKE % name + 'state_path = %s\n%s%s' % (
        tmp_path, extra, placement.nova_conf_section()))
    return str(path)


def provider(client, name, traits=()):
    rp = writes.create_resource_provider(client, name)
    for trait in traits:
        if trait.startswith('CUSTOM_'):
            client.create_trait(trait)
    if traits:
        client.put_provider_traits(rp['uuid'], set(traits), rp['generation'])
    return rp['uuid']


def delete(client, uuid):
    """Delete a provider, as nova-compute does for a node it lost."""
    client.request('DELETE', '/resource_providers/%s' % uuid, ok=(204,))


def status_of(tmp_path):
    return json.loads((tmp_path / 'virt_capabilities_status.json')
                      .read_text())


# -- report --check and --dry-run: the exit code says whether it drifted ----

def test_check_and_dry_run_exit_3_on_drift_and_change_nothing(
        placement, tmp_path, unique):
    client = placement.client()
    name = 'check-' + unique
    mine = 'CUSTOM_CHECK_' + unique.upper()
    uuid = provider(client, name, {'COMPUTE_NODE'})
    path = node(tmp_path, placement, name,
                '[virt_capabilities]\ncustom_traits = %s\n' % mine)
    before = client.get_provider_traits(uuid)
    check = run_cli('report', '--config-file', path, '--check')
    assert check.returncode == DRIFT, check.stderr
    [line] = check.stdout.splitlines()
    assert line.startswith('drift: 1 of 1 provider(s)')
    assert '%s (%s) add %s, remove -' % (name, uuid, mine) in line
    dry_run = run_cli('report', '--config-file', path, '--dry-run', '-f',
                      'json')
    assert dry_run.returncode == DRIFT, dry_run.stderr
    assert json.loads(dry_run.stdout) == [
        {'provider': name, 'uuid': uuid, 'add': [mine], 'remove': []}]
    # Neither wrote anything: not the provider, not the state or status.
    assert client.get_provider_traits(uuid) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ['nova.conf']

    assert run_cli('report', '--config-file', path).returncode == 0
    check = run_cli('report', '--config-file', path, '--check')
    assert check.returncode == 0, check.stderr
    assert check.stdout == 'in sync: 1 provider(s) carry what this node ' \
        'should\n'
    assert run_cli('report', '--config-file', path,
                   '--dry-run').returncode == 0
    # Somebody removes the reporter's trait: drift again.
    traits, generation = client.get_provider_traits(uuid)
    client.put_provider_traits(uuid, traits - {mine}, generation)
    assert run_cli('report', '--config-file', path,
                   '--check').returncode == DRIFT


def test_check_of_a_missing_provider_is_exit_1(placement, tmp_path, unique):
    path = node(tmp_path, placement, 'never-' + unique)
    check = run_cli('report', '--config-file', path, '--check')
    assert check.returncode == 1
    errors = [line for line in check.stderr.splitlines()
              if line.startswith('ERROR')]
    assert len(errors) == 1 and 'never-' + unique in errors[0]


def test_check_goes_with_neither_dry_run_interval_nor_f(listener, tmp_path):
    path = node(tmp_path, listener, 'any')
    for extra in (['--dry-run'], ['--interval', '60'], ['-f', 'json']):
        proc = run_cli('report', '--config-file', path, '--check', *extra)
        assert proc.returncode == 2 and proc.stderr.count('\n') == 1, extra
    assert listener.requests == []


# -- the status file: the last sync, for monitoring -------------------------

def test_each_sync_leaves_its_status_and_a_failure_keeps_the_last_ok(
        placement, tmp_path, unique):
    client = placement.client()
    name = 'status-' + unique
    mine = 'CUSTOM_STATUS_' + unique.upper()
    uuid = provider(client, name)
    path = node(tmp_path, placement, name,
                '[virt_capabilities]\ncustom_traits = %s\n' % mine)
    assert run_cli('report', '--config-file', path).returncode == 0
    first = status_of(tmp_path)
    assert first['format'] == 'virt-capabilities-status/1'
    assert first['result'] == 'ok' and first['error'] is None
    assert first['last_ok'] == first['time']
    assert first['changed'] == [{'provider': uuid, 'added': [mine],
                                 'removed': []}]
    assert first['reporter_name'] == name  # its host
    # A run that fails: the provider is gone.
    delete(client, uuid)
    assert run_cli('report', '--config-file', path).returncode == 1
    failed = status_of(tmp_path)
    assert failed['result'] == 'failed'
    assert name in failed['error']
    assert failed['last_ok'] == first['last_ok']
    assert failed['changed'] == []
    # Nothing but the state, its lock and the status: no temporary file.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        '.virt_capabilities.json.lock', 'nova.conf', 'virt_capabilities.json',
        'virt_capabilities_status.json']


def test_a_status_file_that_cannot_be_written_fails_the_run_naming_it(
        placement, tmp_path, unique):
    client = placement.client()
    name = 'nostatus-' + unique
    uuid = provider(client, name)
    path = node(tmp_path, placement, name, '[virt_capabilities]\n'
                'status_file = /proc/nonexistent/status.json\n')
    proc = run_cli('report', '--config-file', path)
    assert proc.returncode == 1
    last = proc.stderr.splitlines()[-1]
    assert last.startswith('ERROR') and '/proc/nonexistent/status.json' in last
    # The sync itself was done (its own result stands in Placement).
    assert client.get_provider_traits(uuid)[0] == set()


# -- remove: exactly what it set, and its records ---------------------------

def test_remove_takes_off_exactly_what_it_set_and_its_records(
        placement, tmp_path, unique):
    """Two reporters of one provider (one state file, as two config files
    give): a's remove takes off a's trait, keeps the one b's record also
    holds, and never touches nova-compute's, an operator's or b's."""
    client = placement.client()
    name = 'remove-' + unique
    a_only, b_only, both = ('CUSTOM_%s_%s' % (w, unique.upper())
                            for w in ('A', 'B', 'BOTH'))
    operator = 'CUSTOM_OPERATOR_' + unique.upper()
    nova_compute = {'COMPUTE_NODE', T['raw'], 'HW_CPU_X86_AVX2'}
    uuid = provider(client, name, nova_compute | {operator})
    a = node(tmp_path, placement, name, '[virt_capabilities]\n'
             'custom_traits = %s,%s\nreporter_name = a\n' % (a_only, both),
             file='a.conf')
    b = node(tmp_path, placement, name, '[virt_capabilities]\n'
             'custom_traits = %s,%s\nstatus_file = %s\nreporter_name = b\n'
             % (b_only, both, tmp_path / 'b-status.json'), file='b.conf')
    for path in (a, b):
        assert run_cli('report', '--config-file', path).returncode == 0
    assert client.get_provider_traits(uuid)[0] == (
        nova_compute | {operator, a_only, b_only, both})

    proc = run_cli('remove', '--config-file', a)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ''
    assert client.get_provider_traits(uuid)[0] == (
        nova_compute | {operator, b_only, both})
    state = json.loads((tmp_path / 'virt_capabilities.json').read_text())
    assert state['providers'] == {uuid: {'b': sorted([b_only, both])}}
    assert not (tmp_path / 'virt_capabilities_status.json').exists()
    assert (tmp_path / 'b-status.json').exists()
    # Again: nothing left of a's to remove.
    assert run_cli('remove', '--config-file', a).returncode == 0
    # b's remove takes the shared one too; the file stays, saying so.
    assert run_cli('remove', '--config-file', b).returncode == 0
    assert client.get_provider_traits(uuid)[0] == nova_compute | {operator}
    state_file = tmp_path / 'virt_capabilities.json'
    assert json.loads(state_file.read_text()) == {
        'format': ownership_state.FORMAT, 'providers': {},
        'emptied_by_remove': True}
    # A second remove of either finds nothing left: 0, nothing written.
    written = sorted((p.name, p.stat().st_mtime_ns)
                     for p in tmp_path.iterdir())
    for path in (a, b):
        proc = run_cli('remove', '--config-file', path)
        assert proc.returncode == 0, proc.stderr
        assert 'nothing recorded is left to remove' in proc.stderr
    assert sorted((p.name, p.stat().st_mtime_ns)
                  for p in tmp_path.iterdir()) == written
    assert client.get_provider_traits(uuid)[0] == nova_compute | {operator}


def test_remove_with_nothing_recorded_writes_nothing(listener, tmp_path):
    """No custom or image-metadata trait configured and no state: exit 0,
    no request, and neither the state directory nor a lock file made."""
    state_dir = tmp_path / 'state'
    path = tmp_path / 'nova.conf'
    path.write_text(FAKE % 'h' + 'state_path = %s\n' % state_dir
                    + listener.nova_conf_section())
    proc = run_cli('remove', '--config-file', str(path))
    assert proc.returncode == 0, proc.stderr
    assert listener.requests == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ['nova.conf']


def test_remove_as_image_type_owner_takes_off_the_image_types_it_kept(
        placement, tmp_path, unique):
    """With image_type_traits_owner = reporter its image-type traits go too
    (nova-compute, where it runs, reports its own again); an image-metadata
    trait somebody else set before it ran stays."""
    client = placement.client()
    name = 'remove-vmware-' + unique
    uuid = provider(client, name, {'COMPUTE_NODE', 'COMPUTE_STORAGE_BUS_IDE'})
    path = node(tmp_path, placement, name, '[DEFAULT]\n'
                'compute_driver = vmwareapi.VMwareVCDriver\n'
                '[virt_capabilities]\nimage_type_traits_owner = reporter\n')
    proc = run_cli('report', '--config-file', path, '--provider', name)
    assert proc.returncode == 0, proc.stderr
    assert {T['iso'], T['vmdk'], 'COMPUTE_NET_VIF_MODEL_VMXNET3'} <= \
        client.get_provider_traits(uuid)[0]
    proc = run_cli('remove', '--config-file', path, '--provider', name)
    assert proc.returncode == 0, proc.stderr
    assert client.get_provider_traits(uuid)[0] == {
        'COMPUTE_NODE', 'COMPUTE_STORAGE_BUS_IDE'}
    assert 'reports its own again' in proc.stderr


def test_remove_without_a_state_file_is_refused(listener, tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text(FAKE % 'h' + listener.nova_conf_section())
    proc = run_cli('remove', '--config-file', str(path))
    assert proc.returncode == 2 and proc.stderr.count('\n') == 1
    assert 'state file' in proc.stderr
    assert listener.requests == []


def test_remove_without_its_state_file_changes_nothing_and_says_so(
        placement, tmp_path, unique):
    """state_file configured and absent (a one-off container without the
    state volume): exit 2 naming the file, the custom trait stays on the
    provider and the status file stays; no run that removes nothing and
    deletes the status file."""
    client = placement.client()
    name = 'remove-nostate-' + unique
    trove = 'CUSTOM_TROVE_' + unique.upper()
    uuid = provider(client, name, {'COMPUTE_NODE'})
    path = node(tmp_path, placement, name,
                '[virt_capabilities]\ncustom_traits = %s\n' % trove)
    assert run_cli('report', '--config-file', path).returncode == 0
    state = tmp_path / 'virt_capabilities.json'
    status = tmp_path / 'virt_capabilities_status.json'
    state.unlink()
    kept = status.read_bytes()

    proc = run_cli('remove', '--config-file', path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count('\n') == 1
    assert str(state) in proc.stderr and 'does not exist' in proc.stderr
    assert client.get_provider_traits(uuid)[0] == {'COMPUTE_NODE', trove}
    assert status.read_bytes() == kept
    assert not state.exists()


def test_remove_forgets_a_provider_that_is_gone(placement, tmp_path, unique):
    client = placement.client()
    name = 'gone-' + unique
    uuid = provider(client, name)
    path = node(tmp_path, placement, name,
                '[virt_capabilities]\ncustom_traits = CUSTOM_GONE\n')
    assert run_cli('report', '--config-file', path).returncode == 0
    delete(client, uuid)
    assert run_cli('remove', '--config-file', path).returncode == 0
    assert ownership_state.OwnershipState(
        str(tmp_path / 'virt_capabilities.json'), name=name).providers == []


# -- refused credentials: a service waits them out --------------------------

def test_a_service_outlives_refused_credentials_and_says_so_once(
        placement, tmp_path, unique):
    """Placement (noauth2) refuses any token but admin's with 403, as after
    a password rotation. The service retries, reading nova.conf again each
    time, with one ERROR for the whole outage; once nova.conf holds the
    right token it syncs and says it recovered. The status file says
    failed, then ok."""
    client = placement.client()
    name = 'refused-' + unique
    uuid = provider(client, name)
    path = tmp_path / 'nova.conf'
    good = placement.nova_conf_section()
    bad = good.replace('token = %s' % placement.token, 'token = rotated')
    assert bad != good
    path.write_text(FAKE % name + 'state_path = %s\n[virt_capabilities]\n'
                    'custom_traits = CUSTOM_BACK\n%s' % (tmp_path, bad))
    with helpers.Child.module('virt_capabilities.cmd.main', '-v', '-v',
                              'report', '--config-file', str(path),
                              '--interval', '1') as child:
        child.err.wait_for('Placement refused GET /resource_providers (403')
        # Tried again (and again refused), said once.
        child.err.wait_for('still failing', count=2)
        assert status_of(tmp_path)['result'] == 'failed'
        path.write_text(path.read_text().replace(bad, good))
        helpers.wait_until(lambda: 'CUSTOM_BACK' in client.get_provider_traits(
            uuid)[0], 'the sync with the new credentials')
        child.err.wait_for('sync recovered after')
        child.send(signal.SIGTERM)
        assert child.finish() == 0, child.err.text()
    refused = [line for line in child.err.text().splitlines()
               if 'Placement refused' in line
               and line.startswith(('ERROR', 'WARNING'))]
    assert len(refused) == 1, child.err.text()
    assert 'reading the configuration files again' in refused[0]
    helpers.wait_until(lambda: status_of(tmp_path)['result'] == 'ok',
                       'the status of the recovered sync')
