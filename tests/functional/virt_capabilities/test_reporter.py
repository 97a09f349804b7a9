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

"""The reporter against a real Placement: owned traits only, few requests."""

import csv
import io
import json
import signal
import socket
import stat
import subprocess
import sys
import threading

import pytest
import yaml

from image_type_common import backoff
from image_type_common import control as control_mod
from image_type_common import image_types
from image_type_common import placement_client
from placement_runner import writes
from tests import helpers
from virt_capabilities import ownership_state
from virt_capabilities import reporter as reporter_mod
from virt_capabilities import service

T = image_types.TRAIT_BY_FORMAT
UNRELATED = {'CUSTOM_UNRELATED_%02d' % i for i in range(17)} | {
    'HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED', 'STORAGE_DISK_SSD'}
LIBVIRT_CONF = 'compute_driver = libvirt.LibvirtDriver\n'
FAKE_CONF = 'compute_driver = fake.FakeDriver\n'

pytest_generate_tests = helpers.on_every_backend
#: No nova-compute runs beside these reporters: they keep the image types.
REPORTER_OWNS = '[virt_capabilities]\nimage_type_traits_owner = reporter\n'


@pytest.fixture
def write_conf(write_conf):
    """The shared nova.conf writer, the reporter owning the image-type
    traits unless the text says who does."""
    def write(text, placement=None, path=None):
        if 'image_type_traits_owner' not in text:
            text = text + '\n' + REPORTER_OWNS
        return write_conf(text, placement, path)
    return write


def make_provider(client, name, traits=()):
    rp = writes.create_resource_provider(client, name)
    for trait in traits:
        if trait.startswith('CUSTOM_'):
            client.create_trait(trait)
    if traits:
        client.put_provider_traits(rp['uuid'], set(traits), rp['generation'])
    return rp['uuid']


def test_adds_and_removes_only_owned_traits(client, unique):
    uuid = make_provider(client, 'own-' + unique,
                         UNRELATED | {T['vmdk'], T['raw']})
    assert len(UNRELATED) == 20
    desired = {T['raw'], T['qcow2'], T['iso']}
    result = reporter_mod.Reporter(
        client, helpers.image_type_rule(desired)).sync_provider(uuid)
    traits, _ = client.get_provider_traits(uuid)
    assert {t for t in traits
            if image_types.is_image_type_trait(t)} == desired
    assert traits - desired == UNRELATED
    assert result.added == [T['iso'], T['qcow2']]
    assert result.removed == [T['vmdk']]


def about(placement, uuid):
    """The request lines the server saw that name this provider."""
    return [line for line in placement.requests_seen() if uuid in line]


def test_unchanged_provider_costs_one_request(placement, unique):
    uuid = make_provider(placement.client(), 'one-' + unique, {T['raw']})
    client = placement.client()
    client.negotiate()  # negotiated once per client: not counted
    reporter = reporter_mod.Reporter(client,
                                     helpers.image_type_rule({T['raw']}))
    before = len(about(placement, uuid))
    result = reporter.sync_provider(uuid)
    assert len(about(placement, uuid)) - before == 1
    assert about(placement, uuid)[-1] == (
        'GET /resource_providers/%s/traits' % uuid)
    assert not result.changed


def test_changed_provider_costs_two_requests(placement, unique):
    uuid = make_provider(placement.client(), 'two-' + unique, {T['raw']})
    client = placement.client()
    client.negotiate()
    seen_before = len(about(placement, uuid))
    reporter_mod.Reporter(client, helpers.image_type_rule(
        {T['vmdk']})).sync_provider(uuid)
    assert len(about(placement, uuid)) - seen_before == 2  # GET and PUT
    methods = [line.split()[0]
               for line in about(placement, uuid)[seen_before:]]
    assert methods == ['GET', 'PUT']


class InterleavingClient(placement_client.PlacementClient):
    """After our first read, another writer changes the provider for real."""

    def __init__(self, adapter, other_writer):
        super().__init__(adapter)
        self.other_writer = other_writer
        self.reads = 0

    def get_provider_traits(self, uuid):
        result = super().get_provider_traits(uuid)
        self.reads += 1
        if self.reads == 1:
            self.other_writer(uuid)
        return result


def test_concurrent_writer_gets_409_then_both_changes_stand(placement,
                                                           unique):
    setup = placement.client()
    uuid = make_provider(setup, 'race-' + unique, {T['raw']})
    setup.create_trait('CUSTOM_OTHER_' + unique.upper())

    def other_writer(provider):
        traits, gen = setup.get_provider_traits(provider)
        setup.put_provider_traits(
            provider, traits | {'CUSTOM_OTHER_' + unique.upper()}, gen)

    client = InterleavingClient(placement.adapter(), other_writer)
    result = reporter_mod.Reporter(
        client, helpers.image_type_rule({T['qcow2']}),
        backoff=backoff.Backoff(0.001, 5.0)).sync_provider(uuid)
    traits, _ = setup.get_provider_traits(uuid)
    assert result.conflicts == 1
    assert traits == {T['qcow2'], 'CUSTOM_OTHER_' + unique.upper()}


def test_trait_placement_lacks_is_skipped_and_reported(client, unique):
    uuid = make_provider(client, 'old-' + unique, {'HW_CPU_X86_AVX2'})
    future = 'COMPUTE_IMAGE_TYPE_FROM_THE_FUTURE'
    reporter = reporter_mod.Reporter(
        client, helpers.image_type_rule({T['raw'], future}))
    report = reporter.sync([uuid])
    traits, _ = client.get_provider_traits(uuid)
    assert traits == {T['raw'], 'HW_CPU_X86_AVX2'}
    assert report.missing_traits == {future}
    assert service.summarize(report) == 1


def test_many_providers_touch_only_the_stale_ones(sqlite_placement, unique):
    # Request lines are counted while only this test talks to the server.
    placement = sqlite_placement
    client = placement.client()
    desired = {T['raw'], T['qcow2']}
    uuids = [make_provider(client, 'many-%s-%03d' % (unique, i),
                           desired | {'HW_CPU_X86_AVX2'})
             for i in range(40)]
    stale = uuids[::10]  # 4 of them
    for i, uuid in enumerate(stale):
        traits, gen = client.get_provider_traits(uuid)
        traits = traits | {T['vmdk']} if i % 2 else traits - {T['raw']}
        client.put_provider_traits(uuid, traits, gen)
    in_sync = [uuid for uuid in uuids if uuid not in stale]
    reporter = reporter_mod.Reporter(client,
                                     helpers.image_type_rule(desired))
    before = len(placement.requests_seen())
    report = reporter.sync(uuids)
    seen = placement.requests_seen()[before:]
    assert sorted(r.uuid for r in report.results if r.changed) == sorted(stale)
    assert not any(r.error for r in report.results)
    unchanged = [r for r in report.results if not r.changed]
    assert report.skipped_in_sync + len(unchanged) == len(in_sync)
    # What it costs follows what is stale, not the size of the fleet: a
    # read and a write for each stale provider, no request naming a
    # provider already in sync, and fewer requests than one per provider.
    for uuid in stale:
        assert [line.split()[0] for line in seen if uuid in line] == [
            'GET', 'PUT']
    assert not [line for line in seen for uuid in in_sync if uuid in line]
    assert len(seen) < len(uuids)
    for uuid in uuids:
        traits, _ = client.get_provider_traits(uuid)
        assert traits == desired | {'HW_CPU_X86_AVX2'}
    # A second run finds everything in sync without asking per provider.
    before = len(placement.requests_seen())
    again = reporter.sync(uuids)
    seen = placement.requests_seen()[before:]
    assert not any(r.changed for r in again.results)
    assert again.skipped_in_sync + len(again.results) == len(uuids)
    assert not [line for line in seen for uuid in uuids if uuid in line]
    assert len(seen) < len(uuids)


def test_custom_traits_owned_and_dropped(placement, write_conf, tmp_path,
                                         unique):
    client = placement.client()
    uuid = make_provider(client, 'custom-' + unique, {'CUSTOM_SOMEONE_ELSE'})
    state = ownership_state.OwnershipState(str(tmp_path / 'state.json'))
    trove = 'CUSTOM_TROVE_' + unique.upper()
    reporter_mod.Reporter(client, helpers.image_type_rule({T['raw']}, {trove}),
                          state).sync_provider(uuid)
    traits, _ = client.get_provider_traits(uuid)
    assert traits == {T['raw'], trove, 'CUSTOM_SOMEONE_ELSE'}
    # Dropped from the option (a new reporter, state read back from disk).
    state = ownership_state.OwnershipState(str(tmp_path / 'state.json'))
    reporter_mod.Reporter(client, helpers.image_type_rule({T['raw']}),
                          state).sync_provider(uuid)
    traits, _ = client.get_provider_traits(uuid)
    assert traits == {T['raw'], 'CUSTOM_SOMEONE_ELSE'}


def run_cli(*args, timeout=60):
    return subprocess.run([sys.executable, '-m', 'virt_capabilities.cmd.main',
                           *args], capture_output=True, text=True,
                          timeout=timeout)


def test_cli_report_one_shot(placement, write_conf, unique):
    client = placement.client()
    keep = 'CUSTOM_KEEP_' + unique.upper()
    uuid = make_provider(client, 'cli-' + unique, {keep})
    path = write_conf(LIBVIRT_CONF, placement)
    proc = run_cli('report', '--config-file', path, '--provider',
                   'cli-' + unique)
    assert proc.returncode == 0, proc.stderr
    assert 'provider %s: traits added' % uuid in proc.stderr
    traits, _ = client.get_provider_traits(uuid)
    assert traits == {T[f] for f in ('aki', 'ami', 'ari', 'iso', 'qcow2',
                                     'raw')} | {keep}


#: VMware's image-metadata traits (on by default), with their family:
#: Nova 34's VMware driver boots these and never reports them.
VMWARE_METADATA = {
    'COMPUTE_GRAPHICS_MODEL_VMVGA': 'graphics_model',
    'COMPUTE_NET_VIF_MODEL_E1000': 'vif_model',
    'COMPUTE_NET_VIF_MODEL_E1000E': 'vif_model',
    'COMPUTE_NET_VIF_MODEL_PCNET': 'vif_model',
    'COMPUTE_NET_VIF_MODEL_SRIOV': 'vif_model',
    'COMPUTE_NET_VIF_MODEL_VMXNET': 'vif_model',
    'COMPUTE_NET_VIF_MODEL_VMXNET3': 'vif_model',
    'COMPUTE_STORAGE_BUS_IDE': 'storage_bus',
    'COMPUTE_STORAGE_BUS_SCSI': 'storage_bus'}


@pytest.mark.parametrize('fmt,load', [('json', json.loads),
                                      ('yaml', yaml.safe_load)])
def test_cli_show_json(write_conf, fmt, load):
    """The same document in json and in yaml (whose dumper must be taught
    the lists and mappings that print as text)."""
    path = write_conf('compute_driver = vmwareapi.VMwareVCDriver\n'
                      '[virt_capabilities]\ncustom_traits = CUSTOM_TROVE\n')
    proc = run_cli('show', '--config-file', path, '--provider', 'vm-7', '-f',
                   fmt)
    assert proc.returncode == 0, proc.stderr
    metadata = VMWARE_METADATA
    shown = load(proc.stdout)
    why = shown.pop('why')
    assert shown == {
        'compute_driver': 'vmwareapi.VMwareVCDriver',
        'formats': ['iso', 'vmdk'],
        # image_type_traits_owner = reporter: nova-compute keeps none.
        'nova_compute_keeps': [],
        'reporter_keeps': sorted([T['iso'], T['vmdk'], 'CUSTOM_TROVE',
                                  *metadata]),
        'custom_traits': ['CUSTOM_TROVE'], 'excluded': [],
        'image_metadata_traits': {
            family: sorted(t for t, f in metadata.items() if f == family)
            for family in set(metadata.values())},
        'image_type_traits_owner': 'reporter',
        'providers': [{'kind': 'name', 'value': 'vm-7',
                       'source': '--provider'}],
        'provider_needed': None,
        # The state file's name for it: its nova-compute's host, by
        # default this machine's name.
        'reporter_name': socket.gethostname()}
    assert sorted(why) == ['custom_traits', 'image_metadata_traits',
                           'image_type_traits']
    assert why['image_type_traits'].startswith('this reporter keeps them')
    assert 'nova-compute never reports them' in why[
        'image_metadata_traits']


def test_show_without_provider_says_the_driver_needs_one(write_conf):
    path = write_conf('compute_driver = vmwareapi.VMwareVCDriver\n')
    shown = run_cli('show', '--config-file', path, '-f', 'json')
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert document['providers'] == []
    note = document['provider_needed']
    assert note.startswith('give --provider') and 'vCenter uuid' in note
    reported = run_cli('report', '--config-file', path)
    assert reported.returncode == 2
    assert note in reported.stderr


@pytest.mark.parametrize('extra', [
    '[virt_capabilities]\ncustom_traits = CUSTOM_OK, custom_lower\n',
    '[compute]\nimage_type_exclude_list = QCOW2\n',
    '[virt_capabilities]\nimage_type_traits_owner = nobody\n',
])
def test_show_refuses_what_report_refuses_the_same_way(write_conf, listener,
                                                       extra):
    path = write_conf(LIBVIRT_CONF + extra, listener)
    shown = run_cli('show', '--config-file', path)
    reported = run_cli('report', '--config-file', path)
    assert shown.returncode == reported.returncode == 2
    assert shown.stderr == reported.stderr and shown.stderr.count('\n') == 1
    assert listener.requests == []


def test_show_is_what_report_then_keeps(placement, write_conf, unique):
    client = placement.client()
    uuid = make_provider(client, 'same-' + unique, {'HW_CPU_X86_AVX2'})
    path = write_conf(LIBVIRT_CONF + '[virt_capabilities]\n'
                      'custom_traits = CUSTOM_SAME_%s\n[compute]\n'
                      'image_type_exclude_list = iso\n'
                      % unique.upper(), placement)
    node = ('--config-file', path, '--provider', 'same-' + unique)
    shown = json.loads(run_cli('show', *node, '-f', 'json').stdout)
    assert run_cli('report', *node).returncode == 0
    traits, _ = client.get_provider_traits(uuid)
    assert traits - {'HW_CPU_X86_AVX2'} == set(shown['reporter_keeps'])


def test_report_dry_run_lists_the_diff_and_writes_nothing(
        placement, write_conf, unique):
    client = placement.client()
    uuid = make_provider(client, 'dry-' + unique, {T['vmdk'], T['raw']})
    _, generation = client.get_provider_traits(uuid)
    path = write_conf('compute_driver = zvm.ZVMDriver\n', placement)
    dry_run = ('report', '--config-file', path, '--provider',
               'dry-' + unique, '--dry-run')
    # z/VM boots raw only: nothing to add, vmdk to remove. A sync would
    # change it: exit code 3.
    proc = run_cli(*dry_run, '-f', 'json')
    assert proc.returncode == 3, proc.stderr
    assert json.loads(proc.stdout) == [{'provider': 'dry-' + unique,
                                        'uuid': uuid, 'add': [],
                                        'remove': [T['vmdk']]}]
    proc = run_cli(*dry_run)
    assert proc.returncode == 3, proc.stderr
    rows = [[cell.strip() for cell in line.split('|')[1:-1]]
            for line in proc.stdout.splitlines() if line.startswith('| ')]
    assert rows == [['provider', 'uuid', 'add', 'remove'],
                    ['dry-' + unique, uuid, '-', T['vmdk']]]
    assert client.get_provider_traits(uuid) == ({T['vmdk'], T['raw']},
                                                generation)


def test_report_dry_run_lists_those_found_and_names_the_missing(
        placement, write_conf, unique):
    uuid = make_provider(placement.client(), 'dry-in-sync-' + unique,
                         {T['raw']})
    path = write_conf('compute_driver = zvm.ZVMDriver\n', placement)
    proc = run_cli('report', '--config-file', path, '--dry-run', '-f', 'csv',
                   '--provider', 'ghost-' + unique,
                   '--provider', 'dry-in-sync-' + unique)
    assert proc.returncode == 1
    assert list(csv.reader(io.StringIO(proc.stdout))) == [
        ['provider', 'uuid', 'add', 'remove'],
        ['dry-in-sync-' + unique, uuid, '', '']]
    errors = [line for line in proc.stderr.splitlines()
              if line.startswith('ERROR')]
    assert len(errors) == 1 and "'ghost-%s'" % unique in errors[0]


@pytest.mark.parametrize('args', [('-f', 'json'), ('-c', 'uuid')])
def test_report_output_options_go_with_dry_run_only(write_conf, listener,
                                                    args):
    path = write_conf(LIBVIRT_CONF, listener)
    proc = run_cli('report', '--config-file', path, *args)
    assert proc.returncode == 2 and proc.stdout == ''
    assert proc.stderr.count('\n') == 1 and '--dry-run' in proc.stderr
    assert listener.requests == []


def test_one_missing_provider_does_not_stop_the_others(placement,
                                                       write_conf, unique):
    client = placement.client()
    found = make_provider(client, 'node-b-' + unique)
    path = write_conf('compute_driver = fake.FakeDriver\n', placement)
    proc = run_cli('report', '--config-file', path, '--provider',
                   'node-b-' + unique, '--provider', 'ghost-' + unique)
    assert proc.returncode == 1
    assert client.get_provider_traits(found)[0] == {T['raw']}
    errors = [line for line in proc.stderr.splitlines()
              if line.startswith('ERROR')]
    assert len(errors) == 1 and "'ghost-%s'" % unique in errors[0]
    assert 'the others were synced' in errors[0]


def test_a_node_that_boots_nothing_is_warned_about(write_conf):
    path = write_conf('compute_driver = vmwareapi.VMwareVCDriver\n'
                      '[compute]\nimage_type_exclude_list = vmdk,iso\n')
    proc = run_cli('show', '--config-file', path)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines()
                if line.startswith('WARNING')]
    assert len(warnings) == 1
    assert 'boots no image type' in warnings[0]
    assert 'no image boot at all' in warnings[0]


def reporter_child(*args):
    return helpers.Child.module('virt_capabilities.cmd.main', 'report',
                                *args)


def test_provider_created_after_reporter_started(placement, write_conf,
                                                 unique):
    path = write_conf(LIBVIRT_CONF, placement)
    with reporter_child('--config-file', path, '--provider', 'late-' + unique,
                        '--wait', '3600') as child:
        child.err.wait_for('retrying')  # it looked, and did not find it
        uuid = make_provider(placement.client(), 'late-' + unique)
        assert child.finish() == 0, child.err.text()
    traits, _ = placement.client().get_provider_traits(uuid)
    assert T['qcow2'] in traits


def test_missing_provider_after_wait_names_what_was_looked_for(
        placement, write_conf, unique):
    path = write_conf(FAKE_CONF + 'host = never-%s\n' % unique, placement)
    proc = run_cli('report', '--config-file', path, '--wait', '1')
    assert proc.returncode == 1
    assert "name 'never-%s' (from [DEFAULT] host)" % unique in proc.stderr
    assert 'Traceback' not in proc.stderr


def test_compute_id_file_wins_over_host(placement, write_conf, tmp_path,
                                        unique):
    uuid = make_provider(placement.client(), 'cid-' + unique)
    (tmp_path / 'compute_id').write_text(uuid + '\n')
    path = write_conf(LIBVIRT_CONF + 'host = not-this-one\n', placement)
    proc = run_cli('report', '--config-file', path)
    assert proc.returncode == 0, proc.stderr
    traits, _ = placement.client().get_provider_traits(uuid)
    assert T['raw'] in traits


def test_service_mode_sighup_and_sigterm(placement, write_conf, unique):
    """Signals act at once, not at the next (hour-long) interval."""
    client = placement.client()
    uuid = make_provider(client, 'svc-' + unique)
    path = write_conf('compute_driver = fake.FakeDriver\nhost = svc-%s\n'
                      % unique, placement)
    with reporter_child('--config-file', path, '--provider', 'svc-' + unique,
                        '--interval', '3600') as child:
        helpers.wait_until(
            lambda: client.get_provider_traits(uuid)[0] == {T['raw']},
            'first sync')
        with open(path) as f:
            text = f.read().replace('fake.FakeDriver',
                                    'vmwareapi.VMwareVCDriver')
        with open(path, 'w') as f:
            f.write(text + '[compute]\nimage_type_exclude_list = raw\n')
        child.send(signal.SIGHUP)
        helpers.wait_until(lambda: client.get_provider_traits(uuid)[0]
                           == {T['vmdk'], T['iso'], *VMWARE_METADATA},
                           'sync after SIGHUP')
        child.send(signal.SIGTERM)
        assert child.finish() == 0, child.err.text()
    assert child.err.count('configuration re-read') == 1


def test_sigterm_while_waiting_for_the_provider(placement, write_conf,
                                                unique):
    path = write_conf(FAKE_CONF + 'host = never-%s\n' % unique, placement)
    with reporter_child('--config-file', path, '--wait', '3600',
                        '--interval', '3600') as child:
        child.err.wait_for('retrying')
        child.send(signal.SIGTERM)
        assert child.finish() == 0, child.err.text()
    assert 'stopping' in child.err.text()


def run_service_in_thread(path):
    control = control_mod.Control()
    result = {}

    def target():
        result['code'] = service.run_service(
            lambda sleep: service.ReportJob([path], sleep=sleep), 3600, 3600,
            control=control)
    thread = threading.Thread(target=target)
    thread.start()
    return control, thread, result


@pytest.mark.parametrize('moment', ['after its first sync',
                                    'while it waits for the provider'])
def test_library_control_stops_the_service(placement, write_conf, unique,
                                           moment):
    """run_service returns when its control is told to stop (library use)."""
    client = placement.client()
    if moment == 'after its first sync':
        uuid = make_provider(client, 'evt-' + unique)

        def reached():
            return client.get_provider_traits(uuid)[0] == {T['raw']}
    else:
        def reached():
            return any('evt-' + unique in line
                       for line in placement.requests_seen())
    path = write_conf('compute_driver = fake.FakeDriver\nhost = evt-%s\n'
                      % unique, placement)
    control, thread, result = run_service_in_thread(path)
    try:
        helpers.wait_until(reached, moment)
        control.stop()
        thread.join(helpers.SAFETY_TIMEOUT)
    finally:
        control.stop()
    assert not thread.is_alive()
    assert result == {'code': 0}


def test_nova_compute_as_owner_keeps_only_custom_traits(placement,
                                                        write_conf, unique):
    client = placement.client()
    # What nova-compute reported, right or wrong, is nova-compute's.
    uuid = make_provider(client, 'novaowns-' + unique, {T['vmdk']})
    path = write_conf(LIBVIRT_CONF + '[virt_capabilities]\n'
                      'custom_traits = CUSTOM_DB_%s\n'
                      'image_type_traits_owner = nova-compute\n'
                      % unique.upper(), placement)
    proc = run_cli('report', '--config-file', path, '--provider',
                   'novaowns-' + unique)
    assert proc.returncode == 0, proc.stderr
    traits, _ = client.get_provider_traits(uuid)
    assert traits == {T['vmdk'], 'CUSTOM_DB_' + unique.upper()}


STANDARD = {'COMPUTE_NODE', 'HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED'}


def report_with_state(placement, write_conf, tmp_path, name, records):
    """``report`` of the provider ``name`` with a state file holding
    ``records`` ({uuid: record}) as this reporter's own; the process and
    its WARNING lines."""
    path = write_conf(FAKE_CONF, placement)
    (tmp_path / 'virt_capabilities.json').write_text(json.dumps(
        {'format': ownership_state.FORMAT, 'providers': {
            uuid: {socket.gethostname(): record}
            for uuid, record in records.items()}}))
    proc = run_cli('report', '--config-file', path, '--provider', name)
    assert proc.returncode == 0, proc.stderr
    return proc, [line for line in proc.stderr.splitlines()
                  if line.startswith('WARNING')]


def test_standard_traits_listed_in_state_stay_on_the_provider(
        placement, write_conf, tmp_path, unique):
    """nova-compute's traits are never the reporter's, whatever its state
    file says: losing COMPUTE_STATUS_DISABLED would re-enable a disabled
    host."""
    client = placement.client()
    mine = 'CUSTOM_MINE_' + unique.upper()
    uuid = make_provider(client, 'std-' + unique, STANDARD | {mine})
    proc, warnings = report_with_state(
        placement, write_conf, tmp_path, 'std-' + unique,
        {uuid: sorted(STANDARD | {mine})})
    traits, _ = client.get_provider_traits(uuid)
    assert traits == STANDARD | {T['raw']}  # the custom one it set: gone
    assert warnings == [], proc.stderr
    saved = json.loads((tmp_path / 'virt_capabilities.json').read_text())
    assert not STANDARD & {t for entry in saved['providers'].values()
                           for ts in entry.values() for t in ts}


def test_a_wrong_typed_state_entry_refuses_the_file_untouched(
        placement, write_conf, tmp_path, unique):
    """A hand-edited record of the wrong type: nothing in the file is read,
    nothing is sent, and the file stays as it was."""
    client = placement.client()
    mine = 'CUSTOM_MINE_' + unique.upper()
    uuid = make_provider(client, 'typed-' + unique, {mine})
    other = 'c0ffee00-0000-4000-8000-%s' % unique.rjust(12, '0')
    path = write_conf(FAKE_CONF, placement)
    state = tmp_path / 'virt_capabilities.json'
    state.write_text(json.dumps({'format': ownership_state.FORMAT,
                                 'providers': {uuid: {
                                     socket.gethostname(): [mine]},
                                               other: 5}}))
    before = state.read_bytes()
    proc = run_cli('report', '--config-file', path, '--provider',
                   'typed-' + unique)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count('\n') == 1 and str(state) in proc.stderr
    assert client.get_provider_traits(uuid)[0] == {mine}
    assert state.read_bytes() == before


def test_a_state_file_that_is_not_its_own_is_refused_untouched(
        write_conf, listener, tmp_path):
    """A state_file naming something else (a typo, a backup of nova.conf)
    is refused before anything is sent, and stays byte for byte, mode for
    mode, as it was."""
    backup = tmp_path / 'nova.conf.bak'
    backup.write_text('[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n')
    backup.chmod(0o644)
    before = backup.read_bytes()
    path = write_conf(LIBVIRT_CONF + '[virt_capabilities]\nstate_file = %s\n'
                      % backup, listener)
    node = ('--config-file', path, '--provider', 'any')
    runs = [run_cli('report', *node),
            run_cli('report', *node, '--interval', '3600'),
            run_cli('show', *node)]
    for proc in runs:
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count('\n') == 1 and str(backup) in proc.stderr
        assert proc.stderr == runs[0].stderr
    assert listener.requests == []
    assert backup.read_bytes() == before
    assert stat.S_IMODE(backup.stat().st_mode) == 0o644


@pytest.mark.parametrize('state', ['without state_path', 'with state_path'])
def test_reload_drops_a_custom_trait_removed_from_the_config(
        placement, tmp_path, unique, state):
    """SIGHUP's library twin: a custom trait dropped from the config goes,
    also when nothing is kept on disk (the service remembers it)."""
    client = placement.client()
    uuid = make_provider(client, 'hup-' + unique, {'HW_CPU_X86_AVX2'})
    keep, drop = ('CUSTOM_%s_%s' % (w, unique.upper())
                  for w in ('KEEP', 'DROP'))
    path = tmp_path / 'nova.conf'

    def configure(custom):
        path.write_text(
            '[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = hup-%s\n%s'
            '%scustom_traits = %s\n%s' % (
                unique, 'state_path = %s\n' % tmp_path
                if state == 'with state_path' else '', REPORTER_OWNS,
                ','.join(custom), placement.nova_conf_section()))

    configure([keep, drop])
    control, thread, result = run_service_in_thread(str(path))
    try:
        helpers.wait_until(lambda: client.get_provider_traits(uuid)[0] == {
            T['raw'], keep, drop, 'HW_CPU_X86_AVX2'}, 'first sync')
        configure([keep])
        control.reload()
        helpers.wait_until(lambda: client.get_provider_traits(uuid)[0] == {
            T['raw'], keep, 'HW_CPU_X86_AVX2'}, 'sync after reload')
    finally:
        control.stop()
        thread.join(helpers.SAFETY_TIMEOUT)
    assert result == {'code': 0}
    assert sorted(p.name for p in tmp_path.iterdir()) == (
        ['.virt_capabilities.json.lock', 'nova.conf',
         'virt_capabilities.json', 'virt_capabilities_status.json']
        if state == 'with state_path' else ['nova.conf'])


def test_image_metadata_traits_switched_off_remove_only_its_own(
        placement, write_conf, unique):
    """VMware's image-metadata traits: reported beside nova-compute's own,
    and once switched off only those the reporter set are removed (its
    state file says which), never one somebody else had set."""
    client = placement.client()
    name = 'meta-' + unique
    others = {'COMPUTE_NODE', 'HW_ARCH_X86_64', 'COMPUTE_STORAGE_BUS_IDE'}
    uuid = make_provider(client, name, others)
    vmware = 'compute_driver = vmwareapi.VMwareVCDriver\n'
    on = write_conf(vmware, placement)
    assert service.ReportJob([on], [name]).sync(0).ok
    traits, _ = client.get_provider_traits(uuid)
    assert traits == others | {T['iso'], T['vmdk'], *VMWARE_METADATA}
    off = write_conf(vmware + '[virt_capabilities]\n'
                     'image_metadata_traits = False\n', placement, path=on)
    assert service.ReportJob([off], [name]).sync(0).ok
    traits, _ = client.get_provider_traits(uuid)
    assert traits == others | {T['iso'], T['vmdk']}
