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

"""The reporter's ownership state against a real Placement: each
reporter's records are its own, whatever the sharing, and a state that
cannot be saved is a failure naming the file, never success."""

import json
import logging
import socket
import subprocess
import sys

import pytest

from image_type_common import exceptions
from image_type_common import image_types
from image_type_common import placement_client
from placement_runner import writes
from tests import helpers
from virt_capabilities import ownership
from virt_capabilities import ownership_state
from virt_capabilities import reporter as reporter_mod

T = image_types.TRAIT_BY_FORMAT
#: Nova 34's VMware driver boots these and never reports them
#: (virt_capabilities/metadata_traits.py names the lines).
VMWARE_METADATA = {
    'COMPUTE_GRAPHICS_MODEL_VMVGA', 'COMPUTE_NET_VIF_MODEL_E1000',
    'COMPUTE_NET_VIF_MODEL_E1000E', 'COMPUTE_NET_VIF_MODEL_PCNET',
    'COMPUTE_NET_VIF_MODEL_SRIOV', 'COMPUTE_NET_VIF_MODEL_VMXNET',
    'COMPUTE_NET_VIF_MODEL_VMXNET3', 'COMPUTE_STORAGE_BUS_IDE',
    'COMPUTE_STORAGE_BUS_SCSI'}
VMWARE = 'compute_driver = vmwareapi.VMwareVCDriver\n'
LIBVIRT = 'compute_driver = libvirt.LibvirtDriver\n'
REPORTER_OWNS = '[virt_capabilities]\nimage_type_traits_owner = reporter\n'


def run_cli(*args, timeout=60):
    return subprocess.run([sys.executable, '-m', 'virt_capabilities.cmd.main',
                           *args], capture_output=True, text=True,
                          timeout=timeout, env=helpers.clean_env())


def report(path, name):
    """One ``report`` of provider ``name``: must succeed, with no warning."""
    proc = run_cli('report', '--config-file', path, '--provider', name)
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stderr.splitlines()
            if not line.startswith('INFO')] == [], proc.stderr
    return proc


def test_reporters_of_two_drivers_sharing_a_state_path(placement, write_conf,
                                                       unique):
    """The demo's fleet: one state_path for every node. The libvirt
    reporter keeps the VMware one's records, so switching the VMware
    node's image-metadata traits off removes them."""
    client = placement.client()
    vm, kvm = 'vm-' + unique, 'kvm-' + unique
    vm_uuid = writes.create_resource_provider(client, vm)['uuid']
    kvm_uuid = writes.create_resource_provider(client, kvm)['uuid']
    vmware_on = write_conf(VMWARE + REPORTER_OWNS, placement)
    libvirt = write_conf(LIBVIRT + REPORTER_OWNS +
                         'custom_traits = CUSTOM_KVM_%s\n' % unique.upper(),
                         placement)
    report(vmware_on, vm)
    assert VMWARE_METADATA <= client.get_provider_traits(vm_uuid)[0]
    report(libvirt, kvm)
    report(libvirt, kvm)
    assert 'CUSTOM_KVM_' + unique.upper() in client.get_provider_traits(
        kvm_uuid)[0]
    # The VMware node's nova.conf, edited.
    write_conf(VMWARE + REPORTER_OWNS + 'image_metadata_traits = False\n',
               placement, path=vmware_on)
    report(vmware_on, vm)
    assert client.get_provider_traits(vm_uuid)[0] == {T['iso'], T['vmdk']}
    # And the libvirt reporter's record is still there: dropping its custom
    # trait removes it.
    report(write_conf(LIBVIRT + REPORTER_OWNS, placement, path=libvirt), kvm)
    assert not any(t.startswith('CUSTOM_')
                   for t in client.get_provider_traits(kvm_uuid)[0])


def test_two_reporters_of_one_provider_keep_their_own_records(
        placement, write_conf, tmp_path, unique):
    """One state_file on purpose, two reporters (two configurations) of one
    provider, syncing in turn. Each removes only what its own record
    holds: a drops its traits, b's stay, and b's record is left exactly as
    it was; a trait both set stays until both have dropped it."""
    client = placement.client()
    name = 'shared-' + unique
    uuid = writes.create_resource_provider(client, name)['uuid']
    mine, theirs, both = ('CUSTOM_%s_%s' % (who, unique.upper())
                          for who in ('A', 'B', 'BOTH'))
    shared = tmp_path / 'shared' / 'state.json'

    def configure(custom, name, path=None):
        return write_conf(
            LIBVIRT + '[virt_capabilities]\nstate_file = %s\n'
            'custom_traits = %s\nreporter_name = %s\n'
            % (shared, ','.join(custom), name), placement, path=path)

    a = configure([mine, both], 'a')
    b = configure([theirs, both], 'b')
    for path in (a, b, a, b):
        report(path, name)
    assert client.get_provider_traits(uuid)[0] == {mine, theirs, both}
    records = json.loads(shared.read_text())['providers'][uuid]
    assert records == {'a': sorted([mine, both]),
                       'b': sorted([theirs, both])}
    configure([], 'a', path=a)  # a's nova.conf, edited: none of them any more
    report(a, name)
    assert client.get_provider_traits(uuid)[0] == {theirs, both}
    assert json.loads(shared.read_text())['providers'][uuid] == {
        'b': records['b']}
    report(b, name)  # b finds its traits as it left them
    assert client.get_provider_traits(uuid)[0] == {theirs, both}
    configure([theirs], 'b', path=b)
    report(b, name)
    assert client.get_provider_traits(uuid)[0] == {theirs}
    assert json.loads(shared.read_text())['providers'] == {uuid: {
        'b': [theirs]}}


def test_a_record_written_while_a_reporter_waits_is_honoured(
        placement, tmp_path, unique):
    """A reporter reads the state when it starts, and may sync much later
    (waiting for its provider, or for Placement): each sync re-reads the
    others' records, so a trait another reporter recorded meanwhile stays,
    also where this one's own record held it."""
    client = placement.client()
    uuid = writes.create_resource_provider(client, 'since-' + unique)['uuid']
    shared = 'CUSTOM_SINCE_%s' % unique.upper()
    path = str(tmp_path / 'state.json')
    state = ownership_state.OwnershipState(path, name='a')
    reporter_mod.Reporter(client, ownership.OwnerRule(custom={shared}),
                          state).sync([uuid])
    assert client.get_provider_traits(uuid)[0] == {shared}
    # a restarts with the trait dropped, and waits before its first sync
    a = reporter_mod.Reporter(client, ownership.OwnerRule(),
                              ownership_state.OwnershipState(path, name='a'))
    ownership_state.OwnershipState(path, name='b').record(uuid, {shared})
    assert a.sync([uuid]).ok
    assert client.get_provider_traits(uuid)[0] == {shared}
    assert json.loads(open(path).read())['providers'] == {
        uuid: {'b': [shared]}}


class AnswerLost(placement_client.PlacementClient):
    """Placement applies the PUT, and its answer never arrives."""

    def put_provider_traits(self, uuid, traits, generation):
        super().put_provider_traits(uuid, traits, generation)
        raise exceptions.PlacementUnavailable(
            'cannot reach Placement: read timed out')


def test_a_write_whose_answer_was_lost_is_recorded(placement, tmp_path,
                                                   unique):
    """Placement applied the PUT, the reporter never heard: the trait was
    recorded before the write, so once dropped from the configuration the
    next sync removes it, and only it."""
    setup = placement.client()
    uuid = writes.create_resource_provider(setup, 'lost-' + unique)['uuid']
    lost, theirs = ('CUSTOM_%s_%s' % (what, unique.upper())
                    for what in ('LOST', 'THEIRS'))
    setup.create_trait(theirs)
    setup.put_provider_traits(uuid, {theirs}, 0)
    path = str(tmp_path / 'state.json')
    with pytest.raises(exceptions.PlacementUnavailable):
        reporter_mod.Reporter(
            AnswerLost(placement.adapter()),
            ownership.OwnerRule(custom={lost}),
            ownership_state.OwnershipState(path)).sync([uuid])
    assert setup.get_provider_traits(uuid)[0] == {lost, theirs}
    # Restarted with the trait dropped from custom_traits.
    assert reporter_mod.Reporter(
        setup, ownership.OwnerRule(),
        ownership_state.OwnershipState(path)).sync([uuid]).ok
    assert setup.get_provider_traits(uuid)[0] == {theirs}


def test_a_state_that_cannot_be_saved_fails_naming_the_file(
        placement, write_conf, unique):
    """Nothing is set that could not be remembered: the run exits 1 with
    one ERROR line naming the file, and the provider is left as it was."""
    client = placement.client()
    name = 'unsaved-' + unique
    uuid = writes.create_resource_provider(client, name)['uuid']
    path = write_conf(LIBVIRT + REPORTER_OWNS + 'custom_traits = CUSTOM_U\n'
                      'state_file = /proc/nonexist/x.json\n', placement)
    proc = run_cli('report', '--config-file', path, '--provider', name)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith('ERROR') and '/proc/nonexist/x.json' in last
    assert 'Traceback' not in proc.stderr
    assert client.get_provider_traits(uuid)[0] == set()


def test_as_a_service_an_error_each_cycle_until_it_can_be_saved(
        placement, write_conf, tmp_path, unique):
    client = placement.client()
    name = 'later-' + unique
    uuid = writes.create_resource_provider(client, name)['uuid']
    blocker = tmp_path / 'not-yet'
    blocker.write_text('a file where the state directory will be\n')
    path = write_conf(LIBVIRT + REPORTER_OWNS + 'custom_traits = CUSTOM_L\n'
                      'state_file = %s/state.json\n' % blocker, placement)
    with helpers.Child.module('virt_capabilities.cmd.main', 'report',
                              '--config-file', path, '--provider', name,
                              '--interval', '1') as child:
        child.err.wait_for('cannot save ownership state', count=2)
        errors = [line for line in child.err.text().splitlines()
                  if 'cannot save ownership state' in line]
        assert all(line.startswith('ERROR') and str(blocker) in line
                   for line in errors)
        assert client.get_provider_traits(uuid)[0] == set()
        blocker.unlink()  # the directory can be made now
        helpers.wait_until(lambda: 'CUSTOM_L' in client.get_provider_traits(
            uuid)[0], 'a sync once the state can be saved')
        child.send(15)
        assert child.finish() == 0, child.err.text()
    saved = json.loads((blocker / 'state.json').read_text())
    assert saved['providers'] == {uuid: {socket.gethostname(): ['CUSTOM_L']}}


def test_the_demo_fleet_is_reported_without_a_warning(fresh_placement,
                                                      caplog):
    """The demo's twelve nodes share one state_path (libvirt, VMware,
    ironic, z/VM): every reporter keeps the others' records quietly."""
    from image_type_demo import fleet
    with caplog.at_level(logging.WARNING):
        hosts = fleet.build(fresh_placement, fleet.demo_fleet())
    assert [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING] == []
    vmware = [h for h in hosts if h.name.startswith('vmware')]
    client = fresh_placement.client()
    for host in vmware:  # the libvirt nodes reported after them
        assert VMWARE_METADATA <= client.get_provider_traits(host.uuid)[0]


def test_a_reporter_that_sets_nothing_of_its_own_needs_no_writable_state(
        placement, write_conf, unique):
    """Only image types to keep (no custom, no image-metadata trait): no
    record is ever needed, so an unwritable state_file is no failure."""
    client = placement.client()
    name = 'plain-' + unique
    uuid = writes.create_resource_provider(client, name)['uuid']
    path = write_conf('compute_driver = zvm.ZVMDriver\n' + REPORTER_OWNS +
                      'state_file = /proc/nonexist/x.json\n', placement)
    report(path, name)
    assert client.get_provider_traits(uuid)[0] == {T['raw']}
