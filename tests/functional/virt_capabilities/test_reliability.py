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

"""Faults, races and bad input against a real Placement: nothing lost.

Servers are started and stopped by these tests, by their own pid. Figures
(409s absorbed, attempts) are printed; run with ``-s`` to see them.
"""

import signal
import socket
import subprocess
import sys
import threading

import pytest

from image_type_common import backoff
from image_type_common import exceptions
from image_type_common import image_types
from placement_runner import embedded
from placement_runner import writes
from tests import helpers
from tests.helpers import clean_env
from virt_capabilities import reporter as reporter_mod

T = image_types.TRAIT_BY_FORMAT
FAKE_DESIRED = {T['raw']}  # fake.FakeDriver
#: No nova-compute runs beside these reporters: they keep the image types.
REPORTER_OWNS = '[virt_capabilities]\nimage_type_traits_owner = reporter\n'
UNRELATED = {'CUSTOM_BYSTANDER_%02d' % i for i in range(50)}


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def placement_section(port, **extra):
    lines = ['[placement]', 'auth_type = admin_token',
             'endpoint = http://127.0.0.1:%d' % port, 'token = admin',
             'connect_retries = 1', 'connect_retry_delay = 0.1']
    lines += ['%s = %s' % kv for kv in extra.items()]
    return '\n'.join(lines) + '\n'


def node_conf(tmp_path, name, port, driver='fake.FakeDriver', extra=''):
    path = tmp_path / ('%s.conf' % name)
    path.write_text('[DEFAULT]\ncompute_driver = %s\nhost = %s\n'
                    'state_path = %s\n%s%s%s' % (
                        driver, name, tmp_path, extra,
                        placement_section(port), REPORTER_OWNS))
    return str(path)


def report(*args):
    return helpers.Child.module('virt_capabilities.cmd.main', 'report',
                                *args)


def finish(child):
    code = child.finish()
    return code, child.out.text(), child.err.text()


def with_bystanders(client, name):
    """A provider with 50 bystander traits and a wrong image type.

    Call it before any reporter can see the provider: it writes with the
    generation the create returned.
    """
    rp = writes.create_resource_provider(client, name)
    for trait in UNRELATED:
        client.create_trait(trait)
    client.put_provider_traits(rp['uuid'], UNRELATED | {T['vmdk']},
                               rp['generation'])
    return rp['uuid']


def traits_become(client, uuid, expected, what):
    helpers.wait_until(lambda: client.get_provider_traits(uuid)[0]
                       == expected, what,
                       ignore=(exceptions.PlacementError,))


# -- faults -----------------------------------------------------------------

def test_placement_down_at_start_then_up(tmp_path):
    port = free_port()
    db = 'sqlite:///%s' % (tmp_path / 'placement.db')
    # The provider exists in the database; Placement is then stopped.
    with embedded.EmbeddedPlacement(database_url=db, port=port) as server:
        uuid = with_bystanders(server.client(), 'late')
    with report('--config-file', node_conf(tmp_path, 'late', port),
                '--wait', '3600') as child:
        child.err.wait_for('cannot reach Placement')  # one failed attempt
        assert child.process.poll() is None, 'gave up while Placement was down'
        with embedded.EmbeddedPlacement(database_url=db, port=port) as server:
            code, _, err = finish(child)
            traits, _ = server.client().get_provider_traits(uuid)
    assert code == 0, err
    assert traits == UNRELATED | FAKE_DESIRED
    assert 'cannot reach Placement' in err and 'retrying' in err
    assert 'Traceback' not in err
    print('\nPlacement down at start: %d warning line(s) before it came up'
          % err.count('WARNING'))


def test_one_shot_gives_up_after_wait_with_one_line(tmp_path):
    port = free_port()
    code, out, err = finish(report('--config-file',
                                   node_conf(tmp_path, 'never', port),
                                   '--wait', '2'))
    assert code == 1
    errors = [line for line in err.splitlines() if line.startswith('ERROR')]
    assert len(errors) == 1
    assert 'cannot reach Placement' in errors[0] and 'waited 2 s' in errors[0]
    assert 'Traceback' not in err and out == ''


def test_placement_restarted_between_periodic_syncs(tmp_path):
    """The service survives Placement's restart, and says the outage once
    (the cycles after the first at DEBUG) and its end at INFO."""
    port = free_port()
    db = 'sqlite:///%s' % (tmp_path / 'placement.db')
    server = embedded.EmbeddedPlacement(database_url=db, port=port)
    server.start()
    child = None
    try:
        uuid = with_bystanders(server.client(), 'restart')
        # -v -v: the repeated failures, at DEBUG, are seen too.
        child = helpers.Child.module(
            'virt_capabilities.cmd.main', '-v', '-v', 'report',
            '--config-file', node_conf(tmp_path, 'restart', port),
            '--interval', '1')
        traits_become(server.client(), uuid, UNRELATED | FAKE_DESIRED,
                      'first sync')
        old_pid = server.pid
        server.stop()  # by pid
        # Three failed cycles: the first said, the two others at DEBUG.
        child.err.wait_for('still failing: sync failed', count=2)
        server = embedded.EmbeddedPlacement(database_url=db, port=port)
        server.start()
        assert server.pid != old_pid
        client = server.client()
        traits, generation = client.get_provider_traits(uuid)
        assert traits == UNRELATED | FAKE_DESIRED  # survived the restart
        # Somebody puts a wrong image type on while we were away.
        client.put_provider_traits(uuid, traits | {T['vmdk']}, generation)
        traits_become(client, uuid, UNRELATED | FAKE_DESIRED,
                      'the wrong image type removed')
        child.err.wait_for('sync recovered after')
        child.send(signal.SIGTERM)
        code, _, err = finish(child)
        assert code == 0, err
        assert 'sync failed' in err and 'Traceback' not in err
        said = [line for line in err.splitlines()
                if 'sync failed' in line and 'still failing' not in line]
        assert len(said) == 1, err
        assert 'WARNING' in said[0] and 'cannot reach Placement' in said[0]
    finally:
        if child is not None:
            child.kill()
        server.stop()


# -- races ------------------------------------------------------------------

class Writer(threading.Thread):
    """Adds and removes its own CUSTOM trait, round by round, retrying 409s.

    It stands in for another writer (nova-compute, an operator), not for
    the code under test, so like nova-compute's next periodic it also reads
    again after a 500 on its PUT: with PostgreSQL and several API workers
    Placement lets some generation races out as a 500 whose transaction
    was rolled back (seen once as SQLAlchemy's InternalError on its
    generation UPDATE), a shape the client does not map to a conflict.
    """

    #: 500s on its PUT it reads again after; one more fails the test.
    ROLLED_BACK_500S = 3

    def __init__(self, server, uuid, trait, rounds):
        super().__init__()
        self.client = server.client()
        self.uuid, self.trait, self.rounds = uuid, trait, rounds
        self.conflicts = 0
        self.rolled_back = 0
        self.error = None

    def run(self):
        try:
            for round_ in range(self.rounds):
                while True:
                    traits, generation = self.client.get_provider_traits(
                        self.uuid)
                    traits = (traits | {self.trait} if round_ % 2 == 0
                              else traits - {self.trait})
                    try:
                        self.client.put_provider_traits(self.uuid, traits,
                                                        generation)
                        break
                    except exceptions.ConcurrentUpdate:
                        self.conflicts += 1
                    except exceptions.PlacementError as exc:
                        if (' answered 500 to PUT ' not in str(exc) or
                                self.rolled_back >= self.ROLLED_BACK_500S):
                            raise
                        self.rolled_back += 1
        except Exception as exc:  # reported by the test
            self.error = exc

    @property
    def last_word(self):
        return (self.rounds - 1) % 2 == 0  # present after an "add" round


@pytest.mark.parametrize('placement', helpers.BACKENDS, indirect=True)
def test_reporter_races_other_writers(placement, unique):
    setup = placement.client()
    uuid = with_bystanders(setup, 'race-' + unique)
    writers = []
    for i in range(4):
        trait = 'CUSTOM_WRITER_%d_%s' % (i, unique.upper())
        setup.create_trait(trait)
        writers.append(Writer(placement, uuid, trait, rounds=20 + i))
    # A rogue writer keeps putting a wrong image type on.
    rogue = Writer(placement, uuid, T['vmdk'], rounds=21)
    reporter = reporter_mod.Reporter(
        placement.client(), helpers.image_type_rule(FAKE_DESIRED),
        conflict_retries=50, backoff=backoff.Backoff(0.001, 5.0))
    results = []
    for writer in writers + [rogue]:
        writer.start()
    while any(w.is_alive() for w in writers + [rogue]):
        results.append(reporter.sync_provider(uuid))
    for writer in writers + [rogue]:
        writer.join()
        assert writer.error is None, writer.error
    results.append(reporter.sync_provider(uuid))
    traits, _ = setup.get_provider_traits(uuid)
    owned = {t for t in traits if image_types.is_image_type_trait(t)}
    assert owned == FAKE_DESIRED
    assert UNRELATED <= traits
    for writer in writers:
        assert (writer.trait in traits) is writer.last_word
    absorbed = sum(r.conflicts for r in results)
    writer_conflicts = sum(w.conflicts for w in writers + [rogue])
    print('\nrace: %d reporter syncs, %d writer rounds, 409s absorbed: '
          'reporter %d, writers %d, traits lost 0'
          % (len(results), sum(w.rounds for w in writers + [rogue]),
             absorbed, writer_conflicts))


@pytest.mark.parametrize('placement', helpers.BACKENDS, indirect=True)
def test_two_reporters_converge_and_stop_writing(placement, tmp_path,
                                                 unique):
    name = 'twins-' + unique
    uuid = with_bystanders(placement.client(), name)
    port = int(placement.endpoint.rsplit(':', 1)[1])
    conf = node_conf(tmp_path, name, port)
    put = 'PUT /resource_providers/%s/traits' % uuid
    read = 'GET /resource_providers/%s/traits' % uuid
    children = [report('--config-file', conf, '--interval', '1')
                for _ in range(2)]
    try:
        traits_become(placement.client(), uuid, UNRELATED | FAKE_DESIRED,
                      'converged')
        # A cycle under way when it converged may still write; one that
        # starts after it must not. Counted in cycles, not seconds.
        cycles = [c.err.count('sync done') for c in children]
        for child, done in zip(children, cycles, strict=True):
            child.err.wait_for('sync done', done + 2)
        settled = placement.requests_seen().count(put)
        for child, done in zip(children, cycles, strict=True):
            child.err.wait_for('sync done', done + 5)
        later = placement.requests_seen()
    finally:
        for child in children:
            child.send(signal.SIGTERM)
        codes = [finish(child)[0] for child in children]
    assert later.count(put) == settled, 'a reporter kept writing'
    assert settled <= 3
    assert later.count(read) >= 2 * 5
    assert codes == [0, 0]


# -- bad input --------------------------------------------------------------

@pytest.mark.parametrize('body,message', [
    ('[DEFAULT]\ncompute_driver = libvirt.LibvirtDrvier\n', 'LibvirtDrvier'),
    ('[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n[libvirt]\n'
     'images_type = rdb\n', "'rdb'"),
    ('[DEFAULT]\ncompute_driver = fake.FakeDriver\n[compute]\n'
     'image_type_exclude_list = qcow\n', 'qcow'),
    ('[DEFAULT]\ncompute_driver = fake.FakeDriver\n', 'no Placement '
     'credentials'),
    ('[DEFAULT\ncompute_driver = fake.FakeDriver\n', 'nova.conf'),
    ('[DEFAULT]\ncompute_driver = fake.FakeDriver\n[placement]\n'
     'auth_type = no-such-plugin\n', 'no-such-plugin'),
])
def test_bad_configuration_exits_2_and_sends_nothing(listener, tmp_path,
                                                     body, message):
    path = tmp_path / 'nova.conf'
    if 'credentials' in message or 'no-such' in body:
        path.write_text(body)
    else:
        path.write_text(body + listener.nova_conf_section())
    code, _, err = finish(report('--config-file', str(path)))
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], err
    assert listener.requests == []


def test_unreadable_config_exits_2(tmp_path):
    code, _, err = finish(report('--config-file', str(tmp_path)))
    assert code == 2 and 'not readable' in err


@pytest.mark.parametrize('name', ['rack/1?x=%41', '../../traits', 'a b&c=d'])
def test_provider_names_cannot_reach_another_url(fresh_placement, tmp_path,
                                                 name, unique):
    placement = fresh_placement  # every request line counts: its own server
    client = placement.client()
    uuid = writes.create_resource_provider(client, name + unique)['uuid']
    port = int(placement.endpoint.rsplit(':', 1)[1])
    before = len(placement.requests_seen())
    code, _, err = finish(report('--config-file',
                                 node_conf(tmp_path, 'x', port),
                                 '--provider', name + unique))
    assert code == 0, err
    seen = placement.requests_seen()[before:]
    paths = {line.split()[1].split('?')[0] for line in seen}
    assert paths <= {'/', '/resource_providers',
                     '/resource_providers/%s/traits' % uuid}
    assert client.get_provider_traits(uuid)[0] == FAKE_DESIRED


def test_control_characters_in_provider_are_refused(tmp_path):
    code, _, err = finish(report('--config-file',
                                 node_conf(tmp_path, 'x', free_port()),
                                 '--provider', 'bad\nname'))
    assert code == 2 and 'control characters' in err


# -- secrets ----------------------------------------------------------------

SECRET_TOKEN = 'tok-3f9a1c7e5b2d4f60a8c1e9b7d5f3a1c2'
SECRET_PASSWORD = 'pw-8c2e4a6b0d1f3e5a7c9b2d4f6a8c0e1'


@pytest.mark.parametrize('section', [
    '[placement]\nauth_type = admin_token\nendpoint = {endpoint}\n'
    'token = %s\n' % SECRET_TOKEN,
    # A closed port: keystoneauth deadlocks if the identity endpoint answers
    # its discovery with 401 (it re-enters its own lock), so no fake one.
    '[placement]\nauth_type = password\nauth_url = {closed}/identity\n'
    'username = nova\npassword = %s\nproject_name = service\n'
    'user_domain_name = Default\nproject_domain_name = Default\n'
    'connect_retries = 0\n' % SECRET_PASSWORD,
])
def test_secrets_never_reach_output_at_debug(placement, tmp_path, section):
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = h\n'
                    'state_path = %s\n' % tmp_path +
                    section.format(endpoint=placement.endpoint,
                                   closed='http://127.0.0.1:%d'
                                   % free_port()))
    commands = [
        ['virt_capabilities.cmd.main', '--debug', 'show'],
        ['virt_capabilities.cmd.main', '--debug', 'report'],
        ['image_type_filter.cmd.main', '--debug', 'status'],
        ['image_type_filter.cmd.main', '--debug', 'candidates',
         '--disk-format', 'raw', '--explain'],
    ]
    for module, *args in commands:
        proc = subprocess.run([sys.executable, '-m', module, *args,
                               '--config-file', str(path)],
                              capture_output=True, text=True, timeout=120,
                              env=clean_env())
        output = proc.stdout + proc.stderr
        assert SECRET_TOKEN not in output and SECRET_PASSWORD not in output
        if args[1] != 'show':
            assert 'DEBUG' in proc.stderr  # debug logging really was on
    # The password never even reaches Placement. (The token does: that is
    # its job, and Placement's noauth2 test mode logs it as the user id.)
    assert SECRET_PASSWORD not in placement.log_tail(500)


def test_the_real_token_is_redacted_in_debug_logs(placement, tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\n' +
                    placement.nova_conf_section())
    proc = subprocess.run(
        [sys.executable, '-m', 'image_type_filter.cmd.main', '--debug',
         'status', '--config-file', str(path)], capture_output=True,
        text=True, timeout=120, env=clean_env())
    assert 'X-Auth-Token' in proc.stderr  # requests were logged ...
    assert 'X-Auth-Token: admin' not in proc.stderr  # ... but not the token

