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

"""The ownership state file: it can only ever make the reporter remove the
custom traits it set itself, it keeps every other reporter's records, and
it never destroys a file that is not its own."""

import json
import logging
import os
import socket
import stat

import pytest

from image_type_common import exceptions
from virt_capabilities import ownership
from virt_capabilities import ownership_state
from virt_capabilities import reporter as reporter_mod
from virt_capabilities import service

FORMAT = 'virt-capabilities-ownership/1'
U1 = '6a3e5a2e-1b2c-4d5e-8f90-0a1b2c3d4e5f'
U2 = '7b4f6b3f-2c3d-4e6f-9001-1b2c3d4e5f60'
#: The name a state made without one records under.
ME = ownership_state.DEFAULT_NAME


def mine(**records):
    """A document holding this reporter's records only."""
    return {'format': FORMAT, 'providers': {
        uuid: {ME: traits} for uuid, traits in records.items()}}


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write(path, data, mode=0o644):
    path.write_bytes(data if isinstance(data, bytes)
                     else data.encode() if isinstance(data, str)
                     else json.dumps(data).encode())
    path.chmod(mode)
    return str(path)


def without_lock(directory):
    """The files in ``directory`` but the state's lock file."""
    return sorted(name for name in os.listdir(directory)
                  if not name.endswith('.lock'))


# -- only custom traits the reporter set are ever owned ---------------------

def test_standard_traits_in_the_file_are_never_owned(tmp_path):
    """The state hands its records on as the file has them; the owner rule
    takes of them only what the reporter may have set."""
    path = write(tmp_path / 'state.json', mine(**{U1: [
        'COMPUTE_NODE', 'HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED',
        'COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_MINE', 'CUSTOM_lower']}))
    record = ownership_state.OwnershipState(path).owned(U1)
    rule = ownership.OwnerRule()
    assert rule.on_provider(record).owned == {'CUSTOM_MINE'}
    assert rule.removal(record).owned == {'CUSTOM_MINE'}
    assert rule.to_record(record) == frozenset()


# -- a file that is not its own is refused, untouched -----------------------

@pytest.mark.parametrize('content', [
    '[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n',   # nova.conf
    '',
    b'\xff\xfe{"providers": {}}',
    '[["CUSTOM_A"]]',
    '"providers"',
    '{"auth": {"password": "s3cret-Pa55"}}',
    '{"providers": ["CUSTOM_A"]}',
    '{"format": "virt-capabilities-ownership/2", "providers": {}}',
    '{"format": "something-else/1", "providers": {}}',
    '{"providers": {"%s": ["CUSTOM_A"]}}' % U1,
    # Its own format, entries of the wrong shape (hand-edited, or another
    # tool's): nothing in it is read, nothing in it is lost.
    *(json.dumps({'format': FORMAT, 'providers': providers}) for providers in (
        ['CUSTOM_A'], 5, None,
        {U1: ['CUSTOM_A']},
        {U1: 5, U2: {ME: ['CUSTOM_B']}},
        {U1: {ME: 'CUSTOM_A'}},
        {U1: {ME: ['CUSTOM_A'], 'other': {'CUSTOM_X': True}}},
        {U1: {ME: [1, 'CUSTOM_A', None, ['CUSTOM_C']]}})),
], ids=['ini', 'empty', 'not-utf8', 'json-list', 'json-string',
        'json-object', 'providers-not-an-object', 'newer-format',
        'other-format', 'no-format', 'providers-a-list', 'providers-an-int',
        'providers-null', 'a-provider-a-list', 'a-provider-an-int',
        'a-record-a-string', 'a-record-an-object', 'a-record-of-mixed'])
def test_a_file_that_is_not_its_own_is_refused_untouched(tmp_path, content):
    path = write(tmp_path / 'nova.conf.bak', content, mode=0o644)
    before = (open(path, 'rb').read(), os.stat(path))
    with pytest.raises(exceptions.ConfigError) as caught:
        ownership_state.OwnershipState(path)
    message = str(caught.value)
    assert '\n' not in message
    assert path in message and FORMAT in message
    assert 's3cret' not in message  # the file's contents are never shown
    after = os.stat(path)
    assert open(path, 'rb').read() == before[0]
    assert stat.S_IMODE(after.st_mode) == 0o644
    assert after.st_mtime_ns == before[1].st_mtime_ns
    assert os.listdir(tmp_path) == ['nova.conf.bak']


def test_an_unreadable_file_is_refused(tmp_path):
    (tmp_path / 'state.json').mkdir()
    with pytest.raises(exceptions.ConfigError) as caught:
        ownership_state.OwnershipState(str(tmp_path / 'state.json'))
    assert str(tmp_path / 'state.json') in str(caught.value)


@pytest.mark.parametrize('data', [
    mine(**{U1: ['CUSTOM_A']}),
    dict(mine(**{U1: ['CUSTOM_A']}), later='added'),
], ids=['its-format', 'a-key-it-does-not-know'])
def test_its_own_format_is_read(tmp_path, data):
    state = ownership_state.OwnershipState(write(tmp_path / 's.json', data))
    assert state.owned(U1) == {'CUSTOM_A'}
    assert state.others(U1) == frozenset()


def test_a_missing_file_is_empty_state_and_not_created_by_reading(tmp_path):
    state = ownership_state.OwnershipState(str(tmp_path / 'state.json'))
    assert state.providers == []
    assert os.listdir(tmp_path) == []


def test_a_file_put_there_since_it_was_read_is_not_replaced(tmp_path):
    path = tmp_path / 'state.json'
    state = ownership_state.OwnershipState(str(path))
    path.write_text('[DEFAULT]\ndebug = True\n')
    with pytest.raises(ownership_state.StateNotSaved) as caught:
        state.record(U1, {'CUSTOM_A'})
    assert path.read_text() == '[DEFAULT]\ndebug = True\n'
    assert without_lock(tmp_path) == ['state.json']
    assert str(path) in str(caught.value)
    assert '\n' not in str(caught.value)


# -- writes: durable, and the file keeps its mode ---------------------------

def test_writes_are_fsynced_file_before_rename_directory_after(
        tmp_path, monkeypatch):
    path = str(tmp_path / 'state.json')
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        target = os.readlink('/proc/self/fd/%d' % fd)
        if os.path.isdir(target):
            events.append(('fsync dir', target))
        else:  # flushed before: what is fsynced is the whole document
            with open('/proc/self/fd/%d' % fd) as f:
                events.append(('fsync file', target, json.load(f)))
        real_fsync(fd)

    def replace(src, dst):
        events.append(('replace', str(src), str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, 'fsync', fsync)
    monkeypatch.setattr(os, 'replace', replace)
    ownership_state.OwnershipState(path).record(U1, {'CUSTOM_A'})
    document = mine(**{U1: ['CUSTOM_A']})
    assert len(events) == 3, events
    (_, tmp, written), replaced, synced_dir = events
    assert written == document
    assert os.path.dirname(tmp) == str(tmp_path) and tmp != path
    assert replaced == ('replace', tmp, path)
    assert synced_dir == ('fsync dir', str(tmp_path))


def test_a_failed_fsync_keeps_the_old_file_and_leaves_no_temp_file(
        tmp_path, monkeypatch, caplog):
    path = write(tmp_path / 'state.json', mine(**{U1: ['CUSTOM_A']}))

    def fsync(fd):
        raise OSError(5, 'Input/output error')

    monkeypatch.setattr(os, 'fsync', fsync)
    state = ownership_state.OwnershipState(path)
    with pytest.raises(ownership_state.StateNotSaved) as caught:
        state.record(U1, {'CUSTOM_B'})
    monkeypatch.undo()
    assert ownership_state.OwnershipState(path).owned(U1) == {'CUSTOM_A'}
    assert state.owned(U1) == {'CUSTOM_A'}  # not taken as saved either
    assert without_lock(tmp_path) == ['state.json']
    assert 'Input/output error' in str(caught.value) and path in str(
        caught.value)


def test_a_new_file_is_private(tmp_path):
    path = str(tmp_path / 'state.json')
    ownership_state.OwnershipState(path).record(U1, {'CUSTOM_A'})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


@pytest.mark.parametrize('mode', [0o640, 0o644, 0o600])
def test_replacing_its_own_file_keeps_its_mode(tmp_path, mode):
    path = write(tmp_path / 'state.json', mine(**{U1: ['CUSTOM_A']}), mode)
    ownership_state.OwnershipState(path).record(U1, {'CUSTOM_B'})
    assert stat.S_IMODE(os.stat(path).st_mode) == mode
    assert ownership_state.OwnershipState(path).owned(U1) == {'CUSTOM_B'}


# -- a reloaded service does not forget what it set -------------------------

def job_for(tmp_path, name, custom, state_path=None, host='h', extra=''):
    conf = tmp_path / name
    conf.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\n'
                    'host = %s\n' % host
                    + ('state_path = %s\n' % state_path if state_path
                       else '') +
                    '[virt_capabilities]\ncustom_traits = %s\n%s'
                    % (custom, extra))
    return service.ReportJob([str(conf)], client=object())


def test_a_reloaded_job_without_state_file_inherits_what_was_set(tmp_path):
    first = job_for(tmp_path, 'a.conf', 'CUSTOM_A,CUSTOM_B')
    first.reporter.state.record(U1, {'CUSTOM_A', 'CUSTOM_B'})
    second = job_for(tmp_path, 'b.conf', 'CUSTOM_B')
    second.reporter.state.adopt(first.reporter.state)
    ownership = second.reporter.ownership(U1)
    assert ownership.owns('CUSTOM_A')  # dropped: still ours to remove
    # (The image-type traits are nova-compute's, by default.)
    assert ownership.target({'CUSTOM_A', 'CUSTOM_B', 'CUSTOM_X'}) == {
        'CUSTOM_B', 'CUSTOM_X'}
    # Nothing was written anywhere.
    assert sorted(os.listdir(tmp_path)) == ['a.conf', 'b.conf']


def test_a_reloaded_job_with_a_state_file_reads_it(tmp_path):
    first = job_for(tmp_path, 'a.conf', 'CUSTOM_A', state_path=tmp_path)
    first.reporter.state.record(U1, {'CUSTOM_A'})
    second = job_for(tmp_path, 'a.conf', '', state_path=tmp_path)  # edited
    second.reporter.state.adopt(first.reporter.state)
    assert second.reporter.ownership(U1).owns('CUSTOM_A')
    assert read_json(tmp_path / 'virt_capabilities.json')['providers'] == {
        U1: {'h': ['CUSTOM_A']}}


def test_a_reporter_is_named_after_its_nova_compute_s_host(tmp_path):
    job = job_for(tmp_path, 'a.conf', '', host='compute-1')
    assert job.plan.settings.reporter_name == 'compute-1'
    assert job.reporter.state.name == 'compute-1'
    named = job_for(tmp_path, 'b.conf', '', host='compute-1',
                    extra='reporter_name = trove-reserver\n')
    assert named.reporter.state.name == 'trove-reserver'
    unset = tmp_path / 'c.conf'
    unset.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\n')
    assert service.ReportJob([str(unset)], client=object()).reporter.state\
        .name == socket.gethostname()  # Nova's own default for host


def test_a_reporter_keeps_its_records_when_its_files_move(tmp_path):
    old = job_for(tmp_path, 'old.conf', 'CUSTOM_A', state_path=tmp_path)
    old.reporter.state.record(U1, {'CUSTOM_A'})
    moved = job_for(tmp_path, 'moved.conf', '', state_path=tmp_path)
    assert moved.reporter.state.owned(U1) == {'CUSTOM_A'}
    assert moved.reporter.ownership(U1).target({'CUSTOM_A'}) == set()
    # Another nova-compute's reporter: the old name's record is not its
    # own, and protects its trait; reporter_name takes the old name.
    other = job_for(tmp_path, 'other.conf', '', state_path=tmp_path,
                    host='other')
    assert other.reporter.state.owned(U1) == frozenset()
    assert other.reporter.ownership(U1).target({'CUSTOM_A'}) == {'CUSTOM_A'}
    renamed = job_for(tmp_path, 'renamed.conf', '', state_path=tmp_path,
                      host='other', extra='reporter_name = h\n')
    assert renamed.reporter.state.owned(U1) == {'CUSTOM_A'}


# -- shared by several reporters: each one's records are its own ------------

VMWARE_METADATA = frozenset({
    'COMPUTE_STORAGE_BUS_IDE', 'COMPUTE_NET_VIF_MODEL_E1000',
    'COMPUTE_GRAPHICS_MODEL_VMVGA'})


def test_reporters_of_other_drivers_keep_each_others_entries(tmp_path,
                                                             caplog):
    """A fleet's one state_path: the libvirt reporter neither warns about
    nor drops the VMware reporter's image-metadata traits."""
    caplog.set_level(logging.WARNING)
    path = str(tmp_path / 'state.json')
    vmware = ownership_state.OwnershipState(path, name='vmware')
    vmware.record(U1, VMWARE_METADATA | {'CUSTOM_VM'})
    libvirt = ownership_state.OwnershipState(path, name='libvirt')
    assert libvirt.owned(U1) == frozenset()  # never VMware's records
    assert libvirt.others(U1) == VMWARE_METADATA | {'CUSTOM_VM'}
    libvirt.record(U2, {'CUSTOM_KVM', 'HW_ARCH_ARMV7'})
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert read_json(path)['providers'] == {
        U1: {'vmware': sorted(VMWARE_METADATA | {'CUSTOM_VM'})},
        U2: {'libvirt': ['CUSTOM_KVM', 'HW_ARCH_ARMV7']}}
    # The VMware reporter, restarted, still knows what it set.
    again = ownership_state.OwnershipState(path, name='vmware')
    assert again.owned(U1) == VMWARE_METADATA | {'CUSTOM_VM'}


def test_two_reporters_of_one_provider_keep_their_own_records(tmp_path):
    """One state_file on purpose, two reporters of U1: each write changes
    only the writer's record; the other's stays exactly as it was, also
    a trait this reporter would never act on (another's record only
    narrows what it removes)."""
    path = str(tmp_path / 'state.json')
    a = ownership_state.OwnershipState(path, name='a')
    b = ownership_state.OwnershipState(path, name='b')
    a.record(U1, {'CUSTOM_A', 'CUSTOM_BOTH'})
    b.record(U1, {'CUSTOM_B', 'CUSTOM_BOTH'})
    document = read_json(path)
    document['providers'][U1]['b'].append('HW_CPU_X86_AVX2')
    write(tmp_path / 'state.json', document)
    b_record = document['providers'][U1]['b']
    a = ownership_state.OwnershipState(path, name='a')  # restarted
    assert a.owned(U1) == {'CUSTOM_A', 'CUSTOM_BOTH'}
    assert a.others(U1) == {'CUSTOM_B', 'CUSTOM_BOTH', 'HW_CPU_X86_AVX2'}
    a.record(U1, set())  # a dropped both of its traits
    assert read_json(path)['providers'] == {U1: {'b': b_record}}
    assert ownership.OwnerRule().remembered(ownership_state.OwnershipState(
        path, name='b').owned(U1)) == {'CUSTOM_B', 'CUSTOM_BOTH'}


def reporter_of(state, custom):
    """A reporter of custom traits only (no request is made here)."""
    return reporter_mod.Reporter(object(), ownership.OwnerRule(custom=custom),
                                 state)


def test_a_trait_two_reporters_set_stays_while_either_wants_it(tmp_path):
    """a and b both set CUSTOM_X on U1. a drops it: a's record loses it,
    but b's still holds it, so a leaves it on the provider; once b drops
    it too, b removes it."""
    path = str(tmp_path / 'state.json')
    on_u1 = {'CUSTOM_X', 'CUSTOM_A', 'CUSTOM_B', 'HW_CPU_X86_AVX2'}
    a = ownership_state.OwnershipState(path, name='a')
    b = ownership_state.OwnershipState(path, name='b')
    a.record(U1, {'CUSTOM_X', 'CUSTOM_A'})
    b.record(U1, {'CUSTOM_X', 'CUSTOM_B'})
    a = ownership_state.OwnershipState(path, name='a')
    dropped = reporter_of(a, {'CUSTOM_A'}).ownership(U1)
    assert not dropped.owns('CUSTOM_X')
    assert dropped.target(on_u1) == on_u1
    a.record(U1, {'CUSTOM_A'})
    b = ownership_state.OwnershipState(path, name='b')
    assert reporter_of(b, {'CUSTOM_B'}).ownership(U1).target(on_u1) == (
        on_u1 - {'CUSTOM_X'})
    # Owned on U1 only: the same trait on U2, where b recorded nothing,
    # is a's to remove.
    a.record(U2, {'CUSTOM_X'})
    assert reporter_of(a, set()).ownership(U2).owns('CUSTOM_X')


def test_a_record_written_since_the_state_was_read_is_honoured(tmp_path):
    """A service reads the file once; each sync refreshes what the others
    recorded, so one written by another reporter since protects its
    traits at once."""
    path = str(tmp_path / 'state.json')
    service_state = ownership_state.OwnershipState(path, name='service')
    ownership_state.OwnershipState(path, name='other').record(
        U1, {'CUSTOM_X'})
    assert service_state.others(U1) == frozenset()
    service_state.refresh()
    assert service_state.others(U1) == {'CUSTOM_X'}


def test_a_write_keeps_what_others_wrote_since_it_read_the_file(tmp_path):
    """Both read the file before either writes: the second write re-reads
    it (under the lock) and changes only its own provider's entry."""
    path = str(tmp_path / 'state.json')
    first = ownership_state.OwnershipState(path, name='first')
    second = ownership_state.OwnershipState(path, name='second')
    first.record(U1, {'CUSTOM_A'})
    second.record(U2, {'CUSTOM_B'})
    second.record(U1, {'CUSTOM_D'})
    first.record(U1, {'CUSTOM_A', 'CUSTOM_C'})
    second.record(U2, set())  # dropped: only its own record goes
    assert read_json(path)['providers'] == {
        U1: {'first': ['CUSTOM_A', 'CUSTOM_C'], 'second': ['CUSTOM_D']}}


def _record_in_a_child(path, uuids, barrier):
    state = ownership_state.OwnershipState(path)
    barrier.wait()  # every child has read the (empty) file: all race
    for uuid in uuids:
        state.record(uuid, {'CUSTOM_X'})


def test_concurrent_writers_lose_none_of_each_others_records(tmp_path):
    """Four processes sharing one file each record 25 providers, one write
    at a time, all started together: every record is in the file."""
    import multiprocessing
    import uuid as uuid_lib
    path = str(tmp_path / 'state.json')
    context = multiprocessing.get_context('fork')
    barrier = context.Barrier(4)
    batches = [[str(uuid_lib.uuid4()) for _ in range(25)] for _ in range(4)]
    children = [context.Process(target=_record_in_a_child,
                                args=(path, batch, barrier))
                for batch in batches]
    for child in children:
        child.start()
    for child in children:
        child.join(60)
    assert [child.exitcode for child in children] == [0] * 4
    again = ownership_state.OwnershipState(path)
    assert {u for batch in batches for u in batch
            if again.owned(u) == {'CUSTOM_X'}} == {
        u for batch in batches for u in batch}
    assert without_lock(tmp_path) == ['state.json']  # no temp file left


def test_a_writer_waits_for_the_lock_another_holds(tmp_path):
    import fcntl
    path = str(tmp_path / 'state.json')
    holder = os.open(ownership_state.lock_path(path),
                     os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    waited = []

    def sleep(seconds):  # the other writer finishes while this one waits
        waited.append(seconds)
        os.close(holder)

    state = ownership_state.OwnershipState(path, sleep=sleep)
    state.record(U1, {'CUSTOM_A'})
    assert len(waited) == 1
    assert ownership_state.OwnershipState(path).owned(U1) == {'CUSTOM_A'}


def test_a_lock_held_too_long_is_a_failure_naming_the_file(tmp_path):
    import fcntl
    path = str(tmp_path / 'state.json')
    holder = os.open(ownership_state.lock_path(path),
                     os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds + ownership_state.LOCK_TIMEOUT

    state = ownership_state.OwnershipState(path, sleep=sleep,
                                           clock=lambda: now[0])
    try:
        with pytest.raises(ownership_state.StateNotSaved) as caught:
            state.record(U1, {'CUSTOM_A'})
    finally:
        os.close(holder)
    assert path in str(caught.value) and 'held by another process' in str(
        caught.value)
    assert not os.path.exists(path)


def test_a_state_that_cannot_be_saved_is_an_error_naming_it():
    path = '/proc/nonexist/x.json'  # no directory can be made there
    state = ownership_state.OwnershipState(path)
    for attempt in (state.prepare, lambda: state.record(U1, {'CUSTOM_A'})):
        with pytest.raises(ownership_state.StateNotSaved) as caught:
            attempt()
        message = str(caught.value)
        assert path in message and '\n' not in message
    assert state.owned(U1) == frozenset()
