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

"""The gate cloud without a cloud: refusals, shapes, configs, the walk.

The real proof is ``python3 -m gate_cloud run`` itself; these check what can
be checked fast: a port in use is refused naming it before anything starts,
cloud.json has the shape the tempest helper's contract asks for, every
config file the cloud writes parses as Nova and the reporter parse it, and
the services come up after what they need and go down before it.
"""

import configparser
import inspect
import json
import os
import socket
import subprocess
import sys
import types

from oslo_config import cfg
import pytest

from gate_cloud import __main__ as gate_main
from gate_cloud import cloud
from gate_cloud import content
from gate_cloud import context
from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud import series
from gate_cloud.services import glance
from gate_cloud.services import ironic
from gate_cloud.services import ironic_compute
from gate_cloud.services import keystone
from gate_cloud.services import libvirt
from gate_cloud.services import network_standin
from gate_cloud.services import nova
from gate_cloud.services import nova_api
from gate_cloud.services import nova_compute
from gate_cloud.services import nova_conductor
from gate_cloud.services import nova_scheduler
from gate_cloud.services import placement
from gate_cloud.services import reporters
from image_type_filter import conf as itf_conf
from virt_capabilities import conf as vc_conf

#: A series' virtualenv, as the compute's privsep helper path names it.
VENV = '/srv/venv-cloud'
CREDS = {'admin_password': 'a', 'service_password': 's', 'db_user': 'gate',
         'db_password': 'd', 'rabbit_user': 'gate', 'rabbit_password': 'r',
         'erlang_cookie': 'c'}

#: The Nova 34 options the cloud's files set that the checks below read
#: (types as in nova/conf/scheduler.py, compute.py, netconf.py).
NOVA_OPTS = {
    'DEFAULT': [cfg.StrOpt('host'), cfg.StrOpt('compute_driver'),
                cfg.StrOpt('transport_url'), cfg.BoolOpt('debug')],
    'filter_scheduler': [
        cfg.MultiStrOpt('available_filters',
                        default=['nova.scheduler.filters.all_filters']),
        cfg.ListOpt('enabled_filters', default=[])],
    'scheduler': [cfg.IntOpt('workers'),
                  cfg.BoolOpt('query_placement_for_image_type_support',
                              default=False)],
    'compute': [cfg.ListOpt('image_type_exclude_list', default=[])],
}


#: What nova-compute 34 reports for each of the cloud's computes: the
#: libvirt driver's supports_image_type_* on QEMU with qcow2 images
#: (nova/virt/libvirt/driver.py), FakeDriver's capabilities (raw only,
#: nova/virt/fake.py), minus [compute] image_type_exclude_list.
NOVA_FORMATS = {
    'libvirt-qemu': ['aki', 'ami', 'ari', 'iso', 'qcow2', 'raw'],
    'fake-raw': ['raw'],
    'fake-trove': ['raw'],
    'fake-noraw': [],
}


@pytest.fixture
def listener():
    """A real listener on a free loopback port."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    sock.listen(1)
    yield sock.getsockname()[1]
    sock.close()


@pytest.fixture
def private_state(tmp_path, monkeypatch):
    monkeypatch.setattr(layout, 'STATE', tmp_path / 'state')
    return tmp_path / 'state'


def test_port_in_use_refused_naming_it(listener, private_state, monkeypatch,
                                       capsys):
    monkeypatch.setattr(cloud, 'ports', lambda: {'mariadb': 1,
                                                 'keystone': listener})
    assert gate_main.main(['up']) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert '127.0.0.1:%d (keystone) is in use' % listener in err[0]
    # Refused before anything started or was written.
    assert not (private_state / processes.PIDS).exists()


def test_free_ports_pass(private_state, monkeypatch):
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()  # bound once, nobody listening now
    processes.check_ports_free({'keystone': port})


def nova_conf(path):
    conf = cfg.ConfigOpts()
    itf_conf.register_nova_opts(conf)
    vc_conf.register_opts(conf)
    for group, opts in NOVA_OPTS.items():
        for opt in opts:
            try:  # ours register some of Nova's options the same way
                conf.register_opt(opt, group=None if group == 'DEFAULT'
                                  else group)
            except cfg.DuplicateOptError:
                pass
    conf([], project='nova', default_config_files=[str(path)])
    return conf


def written(tmp_path, sections, name='nova.conf'):
    path = tmp_path / name
    path.write_text(inifile.render(sections))
    return path


def test_scheduler_conf_with_filters_as_nova_reads_it(tmp_path):
    conf = nova_conf(written(tmp_path, nova_scheduler.conf(CREDS)))
    assert conf.filter_scheduler.available_filters == [
        'nova.scheduler.filters.all_filters',
        'image_type_filter.nova.all_filters']
    assert 'ImageTypeRebuildFilter' in conf.filter_scheduler.enabled_filters
    assert conf.scheduler.workers == 2
    assert conf.scheduler.filter_hosts_by_image_type_support is True
    assert conf.image_isolation.enabled is True
    assert conf.image_isolation.rules == ['CUSTOM_TROVE']
    assert list(conf.image_metadata_prefilter.families) == ['storage_bus']


def test_scheduler_conf_without_filters_loads_nothing_of_ours(tmp_path):
    conf = nova_conf(written(tmp_path, nova_scheduler.conf(
        CREDS, filters_on=False)))
    assert conf.filter_scheduler.available_filters == [
        'nova.scheduler.filters.all_filters']
    assert 'ImageTypeRebuildFilter' not in \
        conf.filter_scheduler.enabled_filters
    assert conf.scheduler.filter_hosts_by_image_type_support is False
    assert conf.scheduler.workers == 2


@pytest.mark.parametrize('compute', nova_compute.COMPUTES,
                         ids=lambda c: c['host'])
def test_compute_conf_is_read_by_the_reporter_as_meant(tmp_path, compute,
                                                       private_state):
    # private_state: the file's state_path (the reporter's state file) is
    # the test's own, never a cloud's that ran here.
    rec = dict(compute, nova_conf=str(tmp_path / 'nova.conf'))
    path = written(tmp_path, nova_compute.conf(CREDS, rec, VENV))
    conf = nova_conf(path)
    assert conf.host == compute['host']
    assert conf.compute_driver == compute['driver']
    assert conf.virt_capabilities.image_type_traits_owner == 'nova-compute'
    assert conf.virt_capabilities.custom_traits == compute.get(
        'custom_traits', [])
    assert conf.compute.image_type_exclude_list == compute.get('exclude', [])
    # The reporter itself accepts the file (exit 0) and decides what the
    # file says: the formats Nova 34 boots there, and as traits only its
    # custom ones (nova-compute owns the image-type traits).
    out = subprocess.run(
        [sys.executable, '-m', 'virt_capabilities.cmd.main', 'show',
         '--config-file', str(path), '-f', 'json'],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert sorted(shown['formats']) == NOVA_FORMATS[compute['host']]
    assert shown['reporter_keeps'] == compute.get('custom_traits', [])


def test_the_libvirt_compute_powers_empty_guests_off_at_once(tmp_path):
    """Its guests boot empty disks: no OS answers ACPI, so Nova's default
    clean shutdown (60 s, a rebuild's first step) would only wait."""
    for compute in nova_compute.COMPUTES:
        rec = dict(compute, nova_conf=str(tmp_path / 'nova.conf'))
        parsed = configparser.ConfigParser()
        parsed.read_dict(nova_compute.conf(CREDS, rec, VENV))
        timeout = parsed.get('DEFAULT', 'shutdown_timeout', fallback=None)
        if compute['driver'] == 'libvirt.LibvirtDriver':
            assert timeout == '0'
        else:
            assert timeout is None  # the fake driver never waits


def test_every_written_ini_parses(tmp_path):
    for name, sections in (
            ('keystone.conf', keystone.conf(CREDS)),
            ('placement.conf', placement.conf(CREDS)),
            ('glance-api.conf', glance.conf(CREDS)),
            ('ironic.conf', ironic.conf(CREDS)),
            ('api.conf', nova_api.conf(CREDS)),
            ('conductor.conf', nova_conductor.conf(CREDS))):
        path = written(tmp_path, sections, name)
        conf = cfg.ConfigOpts()
        conf([], project='x', default_config_files=[str(path)])
        parser = configparser.RawConfigParser(strict=False)
        parser.read(path)
        for section, options in sections.items():
            for key, value in options.items():
                assert parser.get(section, key) == value, (name, key)


def test_cloud_json_has_the_contract_shape(private_state):
    private_state.mkdir()
    newest = series.newest()
    ctx = context.Cloud(cloud.SERVICES, CREDS, {
        name: newest for name in [s.NAME for s in cloud.SERVICES]
        + [context.CLIENTS]})
    computes = nova_compute.records()
    for c in computes:
        c['image_types'] = ['raw']
    described = content.describe(ctx, computes, {'qcow2': '/x.qcow2',
                                                 'raw': '/x.raw',
                                                 'vmdk': '/x.vmdk'})
    on_disk = json.loads((private_state / 'cloud.json').read_text())
    assert on_disk == described
    assert on_disk['auth_url'] == 'http://127.0.0.1:5000/v3'
    assert on_disk['region'] == 'RegionOne'
    assert set(on_disk['admin']) >= {'username', 'password', 'project_name',
                                     'user_domain_name',
                                     'project_domain_name'}
    assert set(on_disk['endpoints']) >= {'identity', 'compute', 'image',
                                         'placement', 'network'}
    assert set(on_disk['flavor']) == {'id', 'name'}
    assert on_disk['flavor_alt']['id'] != on_disk['flavor']['id']
    assert {'qcow2', 'raw', 'vmdk'} <= set(on_disk['image_files'])
    drivers = {c['driver'] for c in on_disk['computes']}
    assert drivers == {'libvirt.LibvirtDriver',
                       'fake.FakeDriverWithoutFakeNodes'}
    assert len(on_disk['computes']) >= 3
    for c in on_disk['computes']:
        assert set(c) >= {'host', 'driver', 'provider', 'image_types',
                          'custom_traits', 'nova_conf', 'reporter_log'}
    assert [c['host'] for c in on_disk['computes']
            if c['custom_traits'] == ['CUSTOM_TROVE']] == ['fake-trove']
    assert on_disk['reserved_trait'] == 'CUSTOM_TROVE'
    assert on_disk['scheduler']['workers'] == 2
    # tempest and the clients run from the newest series' virtualenv.
    assert on_disk['venv'] == str(layout.REPO / ('.venv-cloud-' + newest))
    # The admin password is in it: readable by its owner only.
    assert (private_state / 'cloud.json').stat().st_mode & 0o077 == 0
    yaml_text = (private_state / 'clouds.yaml').read_text()
    assert 'image-type-gate:' in yaml_text


def test_network_standin_answers_nova_reads_and_nothing_else():
    import http.server
    import threading
    import urllib.error
    import urllib.request
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                             network_standin.Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = 'http://127.0.0.1:%d' % server.server_address[1]
    try:
        with urllib.request.urlopen(  # noqa: S310
                base + '/v2.0/ports?device_id=x', timeout=10) as r:
            assert json.load(r) == {'ports': []}
        with urllib.request.urlopen(  # noqa: S310
                base + '/v2.0/security-groups', timeout=10) as r:
            assert json.load(r) == {'security_groups': []}
        with pytest.raises(urllib.error.HTTPError) as exc:
            urllib.request.urlopen(  # noqa: S310
                base + '/v2.0/routers', timeout=10)
        assert exc.value.code == 404
    finally:
        server.shutdown()
        server.server_close()


def test_gate_cloud_is_not_in_the_wheel():
    parser = configparser.ConfigParser()
    parser.read(layout.REPO / 'setup.cfg')
    include = parser['options.packages.find']['include'].split()
    assert not [p for p in include if p.startswith('gate_cloud')]


def readme_block_after(marker):
    lines = (layout.REPO / 'README.md').read_text().splitlines()
    at = lines.index('<!-- %s -->' % marker)
    assert lines[at + 1] == '```'
    return lines[at + 2]


def test_readme_gate_command_is_this_package_and_ci_runs_it():
    command = readme_block_after('gate-command')
    assert command == 'python3 -m gate_cloud devstack run'
    ci = (layout.REPO / '.ci' / 'run').read_text()
    assert 'readme_command gate-command' in ci
    # The container and the home-made cloud are stopped whatever happens
    # once the gate step starts, and the run's temporary directory is
    # removed.
    clean_up = ci[ci.index('clean_up() {'):ci.index('trap clean_up EXIT')]
    assert 'python3 -m gate_cloud devstack down' in clean_up
    assert 'python3 -m gate_cloud down' in clean_up
    assert 'rm -rf "$TMPDIR"' in clean_up
    assert ci.index('trap clean_up EXIT') < ci.index('gate_down=true') < \
        ci.index('bash -c "$gate_cmd"')


def test_token_count_takes_only_the_reporters_token_requests(private_state):
    from gate_cloud import figures
    logs = private_state / 'logs'
    logs.mkdir(parents=True)
    agent = '%s keystoneauth1/5.18.1 python-requests/2.34.2' % (
        'virt-capabilities')
    (logs / 'keystone-access.log').write_text('\n'.join([
        '[t] "POST /v3/auth/tokens HTTP/1.1" 201 0.5 "%s"' % agent,
        '[t] "POST /v3/auth/tokens HTTP/1.1" 201 0.5 "nova-compute '
        'keystoneauth1/5.18.1"',
        '[t] "GET /v3/auth/tokens HTTP/1.1" 200 0.1 "%s"' % agent,
        '[t] "POST /v3/auth/tokens HTTP/1.1" 201 0.5 "%s"' % agent, '']))
    assert figures.token_requests() == 2


def test_iso_file_is_an_iso_as_glance_inspects_it():
    from oslo_utils.imageutils import format_inspector
    data = content.empty_iso()
    inspector = format_inspector.ISOInspector()
    inspector.eat_chunk(data)
    assert inspector.format_match
    assert inspector.virtual_size == len(data)


def test_a_new_cloud_keeps_the_last_runs_results(private_state):
    private_state.mkdir()
    (private_state / 'figures.json').write_text('{"x": 1}')
    (private_state / 'pip-2026.2.log').write_text('s')
    (private_state / 'logs').mkdir()
    (private_state / 'logs' / 'old.log').write_text('old')
    cloud.fresh_state()
    assert (private_state / 'previous' / 'figures.json').read_text() == \
        '{"x": 1}'
    assert (private_state / 'pip-2026.2.log').exists()
    assert not (private_state / 'logs' / 'old.log').exists()


OSLO_LOG_WRITER = '''
import logging, os, sys
from oslo_config import cfg
from oslo_log import log
conf = cfg.ConfigOpts()
log.register_options(conf)
conf(['--log-file', sys.argv[1]])
log.setup(conf, 'x')
for level, message in zip(sys.argv[2::2], sys.argv[3::2]):
    logging.getLogger('virt_capabilities.service').log(
        getattr(logging, level), message)
print(os.getpid())
'''


def oslo_log_lines(path, *pairs):
    """Lines written by a real oslo.log in a process of their own; its
    pid."""
    out = subprocess.run([sys.executable, '-c', OSLO_LOG_WRITER, str(path),
                          *pairs], check=True, capture_output=True,
                         text=True, timeout=60)
    return int(out.stdout.split()[-1])


def test_fault_phase_reads_one_reporters_lines_from_a_shared_log(tmp_path):
    from gate_cloud import devstack_faults
    from gate_cloud import faults
    from gate_cloud import logfiles
    log = tmp_path / 'nova-compute-x-app.log'
    other = oslo_log_lines(log, 'WARNING', 'nova-compute says something')
    mark = logfiles.size(log)
    pid = oslo_log_lines(
        log, 'INFO', 'sync done: 1 provider(s) checked, 0 changed, 0 '
        'already in sync by query, 0 conflict(s) retried, 0 failed',
        'WARNING', 'sync failed, next attempt at the next interval: '
        'cannot reach Placement', 'INFO', 'sync recovered after 2 failed '
        'cycle(s)')
    assert pid != other
    records = faults.log_records(log, pid, mark)
    assert devstack_faults.severe(records) == [
        'sync failed, next attempt at the next interval: cannot reach '
        'Placement']
    assert devstack_faults.ran_a_cycle_during(records)
    assert devstack_faults.in_sync_again(records)
    assert faults.log_records(log, other, 0) and \
        faults.log_records(log, other, mark) == []


def test_qemu_logs_the_cloud_left_move_into_its_logs(tmp_path):
    log_dir = tmp_path / 'var-log-libvirt-qemu'
    log_dir.mkdir()
    (log_dir / 'someone-else.log').write_text('theirs')
    before = tmp_path / 'before.json'
    before.write_text('["someone-else.log"]')
    (log_dir / 'instance-00000001.log').write_text('ours')
    into = tmp_path / 'logs' / 'qemu'
    libvirt.move_qemu_logs(before, into, log_dir)
    assert sorted(p.name for p in log_dir.iterdir()) == ['someone-else.log']
    assert (into / 'instance-00000001.log').read_text() == 'ours'
    assert not before.exists()


def test_a_qemu_log_dir_the_cloud_made_is_removed(tmp_path):
    log_dir = tmp_path / 'qemu'
    log_dir.mkdir()
    (log_dir / 'instance-00000002.log').write_text('ours')
    before = tmp_path / 'before.json'
    before.write_text('null')
    libvirt.move_qemu_logs(before, tmp_path / 'logs', log_dir)
    assert not log_dir.exists()
    assert (tmp_path / 'logs' / 'instance-00000002.log').exists()


# -- the services: one module each, walked in order ---------------------------

def test_every_service_module_has_what_the_walk_calls():
    names = [svc.NAME for svc in cloud.SERVICES]
    assert len(set(names)) == len(names)
    for at, svc in enumerate(cloud.SERVICES):
        for attr in ('PORTS', 'DEBIAN', 'PYPI', 'NEEDS'):
            assert hasattr(svc, attr), (svc.NAME, attr)
        for step in ('start', 'wait', 'stop'):
            assert callable(getattr(svc, step)), (svc.NAME, step)
        # The list is an order they can come up in: needs come first.
        assert set(svc.NEEDS) <= set(names[:at]), svc.NAME
    # Every port once (cloud.ports() refuses a port claimed twice).
    assert len(set(cloud.ports().values())) == len(cloud.ports())


def test_every_keystone_user_gets_roles_keystone_makes():
    made = {'admin'} | set(keystone.ROLES)
    for svc in cloud.SERVICES:
        for user, roles in getattr(svc, 'USERS', {}).items():
            assert set(roles) <= made, (svc.NAME, user)


def test_the_catalog_has_what_nova_and_tempest_call():
    assert content.endpoints(cloud.SERVICES) == {
        'identity': 'http://127.0.0.1:5000/v3',
        'compute': 'http://127.0.0.1:8774/v2.1',
        'image': 'http://127.0.0.1:9292',
        'placement': 'http://127.0.0.1:8778',
        'network': 'http://127.0.0.1:9696',
        'baremetal': 'http://127.0.0.1:6385'}


def fake_service(name, needs, events, fail=False):
    """A service module's shape, recording each step it is taken through."""
    def step(label):
        def run(ctx):
            events.append((name, label))
            if fail and label == 'bootstrap':
                raise processes.GateError('%s: bootstrap failed' % name)
        return run
    svc = types.SimpleNamespace(NAME=name, NEEDS=needs, PORTS={}, DEBIAN=(),
                                PYPI=())
    for label in cloud.UP_STEPS:
        setattr(svc, label, step(label))
    svc.stop = step('stop')
    return svc


def test_a_service_is_walked_up_only_after_what_it_needs(monkeypatch):
    events = []
    services = (fake_service('db', (), events),
                fake_service('broker', (), events),
                fake_service('api', ('db',), events),
                fake_service('worker', ('db', 'broker', 'api'), events))
    monkeypatch.setattr(cloud, 'SERVICES', services)
    cloud._walk_up(context.Cloud(services))
    for svc in services:
        mine = [label for name, label in events if name == svc.NAME]
        assert mine == list(cloud.UP_STEPS)
        first = events.index((svc.NAME, 'configure'))
        for need in svc.NEEDS:
            assert events.index((need, 'populate')) < first


def test_a_failed_service_stops_the_walk_naming_it(monkeypatch):
    events = []
    services = (fake_service('db', (), events),
                fake_service('api', ('db',), events, fail=True),
                fake_service('worker', ('api',), events))
    monkeypatch.setattr(cloud, 'SERVICES', services)
    with pytest.raises(processes.GateError, match='api: bootstrap failed'):
        cloud._walk_up(context.Cloud(services))
    assert ('api', 'start') not in events
    assert not [e for e in events if e[0] == 'worker']
    assert not processes.CANCEL.is_set()


def test_unknown_needs_are_refused_before_anything_runs(monkeypatch):
    events = []
    services = (fake_service('api', ('db',), events),)
    monkeypatch.setattr(cloud, 'SERVICES', services)
    with pytest.raises(processes.GateError, match='api needs db'):
        cloud._walk_up(context.Cloud(services))
    assert events == []


def test_down_stops_a_service_only_after_everything_that_needs_it():
    waves = cloud._stop_waves()
    assert sorted(s.NAME for w in waves for s in w) == sorted(
        s.NAME for s in cloud.SERVICES)
    wave_of = {svc.NAME: n for n, wave in enumerate(waves) for svc in wave}
    for svc in cloud.SERVICES:
        for need in svc.NEEDS:
            assert wave_of[need] > wave_of[svc.NAME], (svc.NAME, need)


def test_hosts_are_mapped_by_one_service_at_a_time():
    """``nova-manage cell_v2 discover_hosts`` fails ("Duplicate host
    mapping") when two run at once: of the services whose ``populate``
    runs it, each comes up after the others it could overlap with."""
    by_name = {svc.NAME: svc for svc in cloud.SERVICES}

    def needs(name):
        out = set()
        for need in by_name[name].NEEDS:
            out |= {need} | needs(need)
        return out
    mappers = [svc.NAME for svc in cloud.SERVICES
               if 'discover_hosts' in inspect.getsource(
                   getattr(svc, 'populate', lambda c: None))]
    assert len(mappers) >= 2
    for n, first in enumerate(mappers):
        for second in mappers[n + 1:]:
            assert first in needs(second) or second in needs(first), (
                first, second)


def test_the_libvirt_provider_is_found_beside_the_ironic_nodes(
        private_state, monkeypatch):
    """The ironic nova-compute's providers (named by node uuid) may reach
    Placement first: the libvirt node's provider is still the one left
    over, found at the first look."""
    (private_state / 'nova').mkdir(parents=True)
    libvirt_host = [c['host'] for c in nova_compute.COMPUTES
                    if c['driver'] == nova_compute.LIBVIRT][0]
    names = [c['host'] for c in nova_compute.COMPUTES
             if c['host'] != libvirt_host]
    names += list(ironic.NODES.values()) + ['the-libvirt-node']
    monkeypatch.setattr(rest, 'providers',
                        lambda client: [{'name': n} for n in names])
    monkeypatch.setattr(processes, 'started', lambda name: None)

    def once(what, probe, **kw):
        assert probe(), what
    monkeypatch.setattr(processes, 'wait_for', once)
    nova_compute.wait(types.SimpleNamespace(admin=None))
    found = json.loads(layout.path('nova', nova_compute.PROVIDERS)
                       .read_text())
    assert found[libvirt_host] == 'the-libvirt-node'


def test_the_ironic_compute_is_up_only_once_its_record_is_new(
        monkeypatch):
    """Its nodes' providers and the reserved node's trait outlive a
    restart: the ironic nova-compute is up again only when its service
    record was updated after its start (after an upgrade, the record
    carries the service version nova-scheduler's OWNER_NOVA rule reads)."""
    monkeypatch.setattr(rest, 'providers', lambda client: [
        {'name': n} for n in ironic.NODES.values()])
    monkeypatch.setattr(ironic, 'client', lambda cloud: None)
    monkeypatch.setattr(ironic, 'node_traits',
                        lambda admin, node: [layout.RESERVED_TRAIT])
    monkeypatch.setattr(processes, 'started', lambda name: None)

    def once(what, probe, **kw):
        assert probe(), what
    monkeypatch.setattr(processes, 'wait_for', once)
    reported = []
    monkeypatch.setattr(nova, 'wait_reported',
                        lambda cloud, name, binary, host=None:
                        reported.append((name, binary, host)))
    ironic_compute.wait(types.SimpleNamespace(admin=None))
    assert reported == [(ironic_compute.NAME, 'nova-compute',
                         ironic_compute.HOST)]


def test_each_compute_runs_from_its_own_series(tmp_path):
    """A compute moved to another series alone (an upgrade, computes last)
    runs nova-compute and privsep from that series' virtualenv."""
    ctx = context.Cloud(cloud.SERVICES, CREDS, {'nova-compute': '2026.2'})
    assert nova_compute.series_key(ctx, 'libvirt-qemu') == 'nova-compute'
    ctx.series['nova-compute-libvirt-qemu'] = '2026.1'
    assert nova_compute.series_key(ctx, 'libvirt-qemu') == \
        'nova-compute-libvirt-qemu'
    assert nova_compute.series_key(ctx, 'fake-raw') == 'nova-compute'
    rec = dict(nova_compute.COMPUTES[0], nova_conf=str(tmp_path / 'n.conf'))
    helper = nova_compute.conf(CREDS, rec, ctx.venv(
        nova_compute.series_key(ctx, 'libvirt-qemu')))['nova_sys_admin'][
            'helper_command']
    assert helper.startswith(str(series.venv('2026.1') / 'bin'))


def test_the_libvirt_node_holds_every_boot_tempest_runs_at_once(tmp_path):
    """The ISO boot that got no allocation candidates: the only node that
    boots qcow2 and iso held 8 one-VCPU servers (two cores, Nova's
    initial ratio 4.0) while four tempest classes booted at once."""
    rec = dict(nova_compute.COMPUTES[0], nova_conf=str(tmp_path / 'n.conf'))
    assert rec['driver'] == nova_compute.LIBVIRT
    conf = nova_compute.conf(CREDS, rec, VENV)
    written = float(conf['DEFAULT']['cpu_allocation_ratio'])
    assert written * (os.cpu_count() or 1) >= nova_compute.LIBVIRT_GUESTS
    for cores in (1, 2, 3, 8, 64):
        ratio = nova_compute.libvirt_cpu_allocation_ratio(cores)
        assert ratio * cores >= nova_compute.LIBVIRT_GUESTS
        assert ratio >= 4.0  # never below Nova's initial_cpu_allocation_ratio
    assert nova_compute.LIBVIRT_GUESTS > 2 * 4.0
    # FakeDriver nodes: not limited by this (Nova's fake reports 1000 VCPU).
    for c in nova_compute.COMPUTES[1:]:
        fake = nova_compute.conf(CREDS, dict(c, nova_conf='x'), VENV)
        assert 'cpu_allocation_ratio' not in fake['DEFAULT']


# -- what the gate writes into a nova.conf stays what is registered -----------

#: The options of Nova (nova/conf/scheduler.py, compute.py, netconf.py,
#: libvirt.py) and of the libraries it loads (oslo.log's log_file and debug,
#: oslo.messaging's transport_url) the gate writes into groups this
#: project's list_opts registers too: tests/nova checks each against the
#: installed Nova.
NOVA_OPTIONS_IN_SHARED_GROUPS = {
    'DEFAULT': {'transport_url', 'state_path', 'log_file', 'debug',
                'heal_instance_info_cache_interval', 'my_ip', 'host',
                'compute_driver', 'instances_path', 'shutdown_timeout',
                'update_resources_interval', 'cpu_allocation_ratio'},
    'scheduler': {'workers', 'discover_hosts_in_cells_interval',
                  'query_placement_for_image_type_support',
                  'enable_isolated_aggregate_filtering',
                  'image_metadata_prefilter'},
    'libvirt': {'cpu_mode', 'connection_uri'},
    'compute': {'resource_provider_association_refresh'},
    'placement': set(),
    'ironic': {'api_retry_interval'},
}


def gate_nova_confs(tmp_path):
    """Every nova.conf the gate writes, by name."""
    confs = {'api': nova_api.conf(CREDS),
             'conductor': nova_conductor.conf(CREDS),
             'scheduler (filters on)': nova_scheduler.conf(CREDS),
             'scheduler (filters off)': nova_scheduler.conf(
                 CREDS, filters_on=False),
             'scheduler (log-only)': nova_scheduler.conf(CREDS,
                                                         enforce=False),
             'compute ironic': ironic_compute.conf(CREDS),
             'reporter ironic': ironic_compute.reporter_conf(CREDS),
             # The rollback's: Nova's own mechanisms, ours in, then out.
             'scheduler (rollback, ours in)': nova_scheduler.rollback_conf(
                 CREDS, True, True),
             'scheduler (rollback, ours out)': nova_scheduler.rollback_conf(
                 CREDS, False, True)}
    for compute in nova_compute.COMPUTES:
        rec = dict(compute, nova_conf=str(tmp_path / 'nova.conf'))
        confs['compute ' + compute['host']] = nova_compute.conf(CREDS, rec,
                                                                VENV)
        confs['reporter ' + compute['host']] = reporters.conf(
            CREDS, compute['host'])
    return confs


def our_options():
    """{group: option names} of this project's list_opts, both sides."""
    out = {}
    for list_opts in (itf_conf.list_opts, vc_conf.list_opts):
        for group, opts in list_opts():
            name = getattr(group, 'name', group) or 'DEFAULT'
            out.setdefault(name, set()).update(o.dest for o in opts)
    return out


def test_every_option_the_gate_writes_in_our_groups_is_registered(
        tmp_path):
    ours = our_options()
    for conf_name, sections in gate_nova_confs(tmp_path).items():
        for section, options in sections.items():
            if section not in ours:
                continue  # Nova's or a library's: tests/nova checks them
            known = ours[section] | NOVA_OPTIONS_IN_SHARED_GROUPS.get(
                section, set())
            unknown = set(options) - known
            assert not unknown, (
                'the gate writes [%s] %s into the %s nova.conf, which no '
                'list_opts registers' % (section, sorted(unknown),
                                         conf_name))


def test_the_filters_on_scheduler_sets_our_options_by_their_names(
        tmp_path):
    """The behaviour the options stand for, read back as nova-scheduler
    reads it: the unknown-format policy is ours and explicit."""
    conf = nova_conf(written(tmp_path, nova_scheduler.conf(CREDS)))
    assert conf.image_type_filter.unknown_format == 'ignore'


def test_a_services_workers_are_its_children_and_gone_once_reaped():
    """What the upgrade's SIGHUP step waits on: the worker processes a
    service master had are no longer running."""
    worker = subprocess.Popen([sys.executable, '-c',
                               'import sys; sys.stdin.read()'],
                              stdin=subprocess.PIPE)
    try:
        assert worker.pid in processes.children(os.getpid())
        assert processes.running(worker.pid)
    finally:
        worker.stdin.close()
        worker.wait(timeout=30)
    assert worker.pid not in processes.children(os.getpid())
    assert not processes.running(worker.pid)
