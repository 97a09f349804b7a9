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

"""The reporter as a service and a command: exit codes that hold, and
signals and bad configuration handled the way an operator expects."""

import signal

import pytest

from placement_runner import writes
from tests import helpers

LATIN1_HOST = b'host = caf\xe9\n'


def report(*args):
    return helpers.Child.module('virt_capabilities.cmd.main', 'report', *args)


def finish(child):
    code = child.finish()
    return code, [line for line in child.err.text().splitlines()
                  if line.strip()]


@pytest.fixture
def refusing():
    """An endpoint that answers 401 to everything (records what it got)."""
    server = helpers.RecordingServer(status=401)
    yield server
    server.stop()


#: No nova-compute runs beside these reporters: they keep the image types.
REPORTER_OWNS = '[virt_capabilities]\nimage_type_traits_owner = reporter\n'


def node_conf(tmp_path, placement_section, extra=''):
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = h\n'
                    'state_path = %s\n%s%s%s' % (tmp_path, extra,
                                                 placement_section,
                                                 REPORTER_OWNS))
    return path


@pytest.mark.parametrize('args,says', [
    (['--interval', 'nan'], '--interval'),
    (['--interval', 'inf'], '--interval'),
    (['--interval', '0.01'], 'from 1 to 86400'),
    (['--interval', '1e10'], 'from 1 to 86400'),
    (['--wait', 'nan'], '--wait'),
    (['--wait', '-1'], '--wait'),
])
def test_unusable_durations_are_usage_errors(listener, tmp_path, args, says):
    path = node_conf(tmp_path, listener.nova_conf_section())
    code, lines = finish(report('--config-file', str(path), *args))
    assert code == 2 and len(lines) == 1 and says in lines[0], lines
    assert listener.requests == []


@pytest.mark.parametrize('section,says', [
    ('[placement]\nauth_type = admin_token\nendpoint = {url}\ntoken =\n',
     'token is empty'),
    ('[placement]\nauth_type = admin_token\nendpoint = placement.local\n'
     'token = admin\n', 'not an http(s) URL'),
    ('[placement]\nauth_type = admin_token\nendpoint = {url}\ntoken = x\n'
     'endpoint_override = 127.0.0.1:8778\n', 'endpoint_override'),
    ('[placement]\nauth_type = password\nauth_url = keystone.local:5000\n'
     'username = nova\npassword = pw\nproject_name = service\n'
     'user_domain_name = Default\nproject_domain_name = Default\n',
     'auth_url'),
])
@pytest.mark.parametrize('mode', [['--wait', '600'], ['--interval', '3600']],
                         ids=['one-shot', 'service'])
def test_credentials_that_cannot_work_are_exit_2_before_sending(
        listener, tmp_path, section, says, mode):
    """As a service too: a malformed section is no outage to wait out."""
    path = node_conf(tmp_path, section.format(url=listener.endpoint))
    code, lines = finish(report('--config-file', str(path), *mode))
    assert code == 2 and len(lines) == 1 and says in lines[0], lines
    assert listener.requests == []


def test_identity_answering_401_to_discovery_fails_fast(refusing, listener,
                                                        tmp_path):
    """keystoneauth1 would hang for ever here (it re-enters its own lock)."""
    path = node_conf(tmp_path, (
        '[placement]\nauth_type = password\nauth_url = %s/identity\n'
        'username = nova\npassword = pw\nproject_name = service\n'
        'user_domain_name = Default\nproject_domain_name = Default\n'
        'endpoint_override = %s\n' % (refusing.endpoint, listener.endpoint)))
    code, lines = finish(report('--config-file', str(path), '--wait', '600'))
    assert code == 2 and len(lines) == 1, lines
    assert 'answered 401 to version discovery' in lines[0]
    assert refusing.requests == ['GET /identity']
    assert listener.requests == []


def test_placement_refusing_the_token_is_exit_2_not_retried(refusing,
                                                            tmp_path):
    path = node_conf(tmp_path, '[placement]\nauth_type = admin_token\n'
                     'endpoint = %s\ntoken = wrong\n' % refusing.endpoint)
    code, lines = finish(report('--config-file', str(path), '--wait', '600'))
    assert code == 2 and lines[-1].startswith('ERROR'), lines
    assert 'refused the credentials (401)' in lines[-1]
    assert len(refusing.requests) == 1  # no retry for the whole --wait


def test_a_service_that_starts_with_refused_credentials_keeps_trying(
        refusing, tmp_path):
    """A 401 at start-up is no configuration error to stop for good on
    (the unit's RestartPreventExitStatus=2 would): the service retries,
    with back-off, until stopped. (Its recovery, against a real Placement:
    tests/functional/virt_capabilities/test_reporter_lifecycle.py.)"""
    path = node_conf(tmp_path, '[placement]\nauth_type = admin_token\n'
                     'endpoint = %s\ntoken = wrong\n' % refusing.endpoint)
    with report('--config-file', str(path), '--interval', '1') as child:
        child.err.wait_for('refused the credentials (401)')
        helpers.wait_until(lambda: len(refusing.requests) >= 2,
                           'a second try')
        child.send(signal.SIGTERM)
        code, lines = finish(child)
    assert code == 0, lines
    assert sum('refused the credentials' in line for line in lines) == 1


def test_a_non_utf8_config_is_exit_2_naming_the_file(listener, tmp_path):
    path = node_conf(tmp_path, listener.nova_conf_section())
    path.write_bytes(path.read_bytes() + LATIN1_HOST)
    code, lines = finish(report('--config-file', str(path)))
    assert code == 2 and len(lines) == 1, lines
    assert '%s is not UTF-8: byte 0xe9' % path in lines[0]
    assert listener.requests == []


def test_sighup_with_an_unreadable_config_keeps_the_previous_one(
        placement, tmp_path, unique):
    client = placement.client()
    uuid = writes.create_resource_provider(client, 'hup-' + unique)['uuid']
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = '
                    'hup-%s\nstate_path = %s\n%s%s' % (
                        unique, tmp_path, placement.nova_conf_section(),
                        REPORTER_OWNS))
    with report('--config-file', str(path), '--interval', '3600') as child:
        child.err.wait_for('sync done')
        path.write_bytes(path.read_bytes() + LATIN1_HOST)
        child.send(signal.SIGHUP)
        child.err.wait_for('keeping the previous configuration')
        assert child.process.poll() is None  # still serving
        child.send(signal.SIGTERM)
        code, lines = finish(child)
    assert code == 0, lines
    assert client.get_provider_traits(uuid)[0] == {'COMPUTE_IMAGE_TYPE_RAW'}
    kept = [line for line in lines if 'keeping the previous' in line]
    assert len(kept) == 1 and 'not UTF-8' in kept[0]


def test_split_config_in_a_nova_conf_d_directory(placement, tmp_path,
                                                 unique):
    client = placement.client()
    uuid = writes.create_resource_provider(client, 'split-' + unique)['uuid']
    conf_d = tmp_path / 'nova.conf.d'
    conf_d.mkdir()
    (conf_d / '10-nova.conf').write_text(
        '[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = wrong\n'
        'state_path = %s\n%s' % (tmp_path, REPORTER_OWNS))
    (conf_d / '20-nova-compute.conf').write_text(
        '[DEFAULT]\ncompute_driver = vmwareapi.VMwareVCDriver\n'
        'host = split-%s\n' % unique)
    (conf_d / 'README').write_text('not a .conf file: ignored\xe9')
    main = tmp_path / 'nova.conf'
    main.write_text(placement.nova_conf_section())
    code, lines = finish(report('--config-file', str(main), '--config-dir',
                                str(conf_d), '--provider', 'split-' + unique))
    assert code == 0, lines
    # The later file's driver (VMware) wins: its image types.
    assert {t for t in client.get_provider_traits(uuid)[0]
            if t.startswith('COMPUTE_IMAGE_TYPE_')} == {
        'COMPUTE_IMAGE_TYPE_ISO', 'COMPUTE_IMAGE_TYPE_VMDK'}


def test_nova_conf_log_options_are_obeyed(placement, tmp_path, unique):
    client = placement.client()
    writes.create_resource_provider(client, 'logs-' + unique)
    log_file = tmp_path / 'virt-capabilities.log'
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = '
                    'logs-%s\nlog_file = %s\n%s' % (
                        unique, log_file, placement.nova_conf_section()))
    code, lines = finish(report('--config-file', str(path)))
    assert code == 0, lines
    assert 'sync done' in log_file.read_text()


def test_state_is_kept_only_under_state_path(placement, tmp_path, unique):
    client = placement.client()
    writes.create_resource_provider(client, 'state-' + unique)
    body = ('[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = state-%s\n'
            '%%s[virt_capabilities]\ncustom_traits = CUSTOM_STATE_%s\n%s'
            % (unique, unique.upper(), placement.nova_conf_section()))
    path = tmp_path / 'nova.conf'
    path.write_text(body % '')
    code, lines = finish(report('--config-file', str(path)))
    assert code == 0, lines
    assert any('no [DEFAULT] state_path' in line for line in lines)
    assert [p.name for p in tmp_path.iterdir()] == ['nova.conf']
    state_path = tmp_path / 'state'
    state_path.mkdir()
    path.write_text(body % ('state_path = %s\n' % state_path))
    code, lines = finish(report('--config-file', str(path)))
    assert code == 0, lines
    assert sorted(p.name for p in state_path.iterdir()) == [
        '.virt_capabilities.json.lock', 'virt_capabilities.json',
        'virt_capabilities_status.json']


def test_sigterm_ends_a_sync_stuck_in_keystoneauth_retries(listener,
                                                           tmp_path):
    """Placement answers 503 and keystoneauth1 would retry for an hour."""
    path = node_conf(tmp_path, '[placement]\nauth_type = admin_token\n'
                     'endpoint = %s\ntoken = admin\nstatus_code_retries = 120'
                     '\nstatus_code_retry_delay = 30\n' % listener.endpoint)
    with report('--config-file', str(path), '--provider', 'h',
                '--interval', '3600') as child:
        helpers.wait_until(lambda: listener.requests, 'a first request')
        child.send(signal.SIGTERM)
        code, lines = finish(child)
    assert code == 0, lines
    assert lines[-1].endswith('stopping')


def test_sighup_ends_a_stuck_sync_and_uses_the_new_configuration(
        listener, placement, tmp_path, unique):
    """Placement was misconfigured (an endpoint answering 503, retried for
    an hour); the fixed nova.conf and a SIGHUP take effect at once."""
    client = placement.client()
    uuid = writes.create_resource_provider(client, 'hup2-' + unique)['uuid']
    stuck = ('[placement]\nauth_type = admin_token\nendpoint = %s\n'
             'token = admin\nstatus_code_retries = 120\n'
             'status_code_retry_delay = 30\n' % listener.endpoint)
    path = node_conf(tmp_path, stuck)
    with report('--config-file', str(path), '--provider', 'hup2-' + unique,
                '--interval', '3600') as child:
        helpers.wait_until(lambda: listener.requests, 'a first request')
        path.write_text(path.read_text().replace(
            stuck, placement.nova_conf_section()))
        child.send(signal.SIGHUP)
        helpers.wait_until(lambda: client.get_provider_traits(uuid)[0]
                           == {'COMPUTE_IMAGE_TYPE_RAW'}, 'synced')
        child.send(signal.SIGTERM)
        code, lines = finish(child)
    assert code == 0, lines
    assert any('configuration re-read' in line for line in lines)


def test_a_one_shot_command_ends_with_128_plus_the_signal(sqlite_placement,
                                                          tmp_path):
    """SIGTERM reaches a one-shot command through the CLI's one signal
    path: it unwinds wherever it is (here waiting for a provider nova-compute
    has not created) and exits 128 + SIGTERM, without a traceback."""
    path = node_conf(tmp_path, sqlite_placement.nova_conf_section())
    with helpers.Child.module(
            'virt_capabilities.cmd.main', 'report', '--config-file',
            str(path), '--provider', 'not-created-yet',
            '--wait', '3600') as child:
        child.err.wait_for('retrying in')
        child.send(signal.SIGTERM)
        assert child.finish() == 128 + signal.SIGTERM
    assert 'Traceback' not in child.err.text()
