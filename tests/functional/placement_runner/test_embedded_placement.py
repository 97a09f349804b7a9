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

"""The embedded Placement is the real thing, and it leaves nothing behind."""

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap

import pytest
import requests

from image_type_common import exceptions
from placement_runner import embedded
from placement_runner import server as embedded_server
from placement_runner import writes
from tests import helpers

INVENTORY = {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 8192},
             'DISK_GB': {'total': 100}}


def _node(client, name, traits):
    rp = writes.create_resource_provider(client, name)
    gen = writes.put_inventories(client, rp['uuid'], rp['generation'],
                                 INVENTORY)['resource_provider_generation']
    client.put_provider_traits(rp['uuid'], traits, gen)
    return rp['uuid']


def test_candidates_filtered_by_required_trait(placement, client, unique):
    vmdk = _node(client, 'vmdk-' + unique, {'COMPUTE_IMAGE_TYPE_VMDK'})
    qcow = _node(client, 'qcow2-' + unique, {'COMPUTE_IMAGE_TYPE_QCOW2'})
    found = client.get_allocation_candidates(
        'resources=VCPU:1,MEMORY_MB:512&required=COMPUTE_IMAGE_TYPE_VMDK')
    uuids = set(found['provider_summaries'])
    assert vmdk in uuids
    assert qcow not in uuids


def test_stale_generation_is_a_conflict(client, unique):
    rp = writes.create_resource_provider(client, 'stale-' + unique)
    client.put_provider_traits(rp['uuid'], {'COMPUTE_IMAGE_TYPE_RAW'},
                               rp['generation'])
    with pytest.raises(exceptions.ConcurrentUpdate):
        client.put_provider_traits(rp['uuid'], {'COMPUTE_IMAGE_TYPE_ISO'},
                                   rp['generation'])
    traits, _ = client.get_provider_traits(rp['uuid'])
    assert traits == {'COMPUTE_IMAGE_TYPE_RAW'}


def test_openstacksdk_connection_reaches_it(placement, unique):
    writes.create_resource_provider(placement.client(), 'sdk-' + unique)
    names = {rp.name for rp in placement.connection().placement
             .resource_providers()}
    assert 'sdk-' + unique in names


def test_stop_leaves_no_process_or_directory():
    server = embedded.EmbeddedPlacement()
    server.start()
    pid, workdir = server.pid, server.workdir
    assert stat.S_IMODE(os.stat(workdir).st_mode) == 0o700
    assert server.endpoint.startswith('http://127.0.0.1:')
    assert requests.get(server.endpoint + '/', timeout=10).status_code == 200
    server.stop()
    assert not helpers.pid_alive(pid)
    assert not os.path.exists(workdir)
    server.stop()  # idempotent


@pytest.mark.skipif(not os.path.isdir('/proc/self'), reason='reads /proc')
def test_env_reaches_the_server():
    """``env`` is added to the server's environment (how a patched
    Placement is put first on its PYTHONPATH)."""
    with embedded.EmbeddedPlacement(
            env={'EMBEDDED_PLACEMENT_TEST_MARK': 'on'}) as server:
        with open('/proc/%d/environ' % server.pid, 'rb') as f:
            environ = f.read().split(b'\0')
    assert b'EMBEDDED_PLACEMENT_TEST_MARK=on' in environ
    assert 'EMBEDDED_PLACEMENT_TEST_MARK' not in os.environ


@pytest.mark.skipif(shutil.which('patch') is None,
                    reason='patch(1) is not installed')
def test_a_patched_placement_is_served_and_answers(tmp_path, monkeypatch):
    """``patch=`` serves the patched copy: the server imports Placement
    from it (its allocation_candidate module has the change), and
    root_required still selects exactly the roots with the trait."""
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
    with embedded.EmbeddedPlacement(patch='root-required-prefilter') as server:
        probe = subprocess.run(
            [sys.executable, '-c', 'import placement.objects.allocation_'
             'candidate as m; print(m.__file__)'], capture_output=True,
            text=True, timeout=60, env=dict(
                os.environ, PYTHONPATH=_environ(server.pid)['PYTHONPATH']))
        with open(probe.stdout.strip()) as f:
            assert 'in_filtered_anchors(root_id) or rp_id in sharing' in \
                f.read()
        client = server.client()
        with_trait = writes.create_resource_provider(client, 'with-trait')
        without = writes.create_resource_provider(client, 'without')
        for rp, traits in ((with_trait, {'CUSTOM_MARK'}), (without, set())):
            generation = writes.put_inventories(
                client, rp['uuid'], rp['generation'], {'VCPU': {'total': 4}})[
                'resource_provider_generation']
            if traits:
                client.create_trait('CUSTOM_MARK')
                client.put_provider_traits(rp['uuid'], traits, generation)
        body = client.get_allocation_candidates(
            'resources=VCPU:1&root_required=CUSTOM_MARK')
        assert [list(r['allocations']) for r in
                body['allocation_requests']] == [[with_trait['uuid']]]


def test_an_unknown_patch_is_a_usage_error():
    with pytest.raises(embedded.EmbeddedPlacementUsageError,
                       match='root-required-prefilter'):
        embedded.EmbeddedPlacement(patch='no-such-patch').start()


def _environ(pid):
    with open('/proc/%d/environ' % pid, 'rb') as f:
        return dict(item.decode().split('=', 1)
                    for item in f.read().split(b'\0') if b'=' in item)


def test_listens_on_loopback_only(placement):
    """The listening socket is bound to 127.0.0.1 (read from the kernel)."""
    port = int(placement.endpoint.rsplit(':', 1)[1])
    listening = _listening_addresses(port)
    assert listening == {'127.0.0.1'}


def _listening_addresses(port):
    found = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            address, hexport = local.split(':')
            if state == '0A' and int(hexport, 16) == port:
                found.add(socket.inet_ntop(
                    socket.AF_INET if len(address) == 8 else socket.AF_INET6,
                    bytes.fromhex(address)[::-1] if len(address) == 8
                    else bytes.fromhex(address)))
    return found


def test_caller_exception_still_cleans_up():
    with pytest.raises(RuntimeError):
        with embedded.EmbeddedPlacement() as server:
            pid, workdir = server.pid, server.workdir
            raise RuntimeError('caller failed')
    assert not helpers.pid_alive(pid)
    assert not os.path.exists(workdir)


@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGKILL])
def test_caller_killed_leaves_nothing_behind(sig):
    script = textwrap.dedent('''
        import sys, time
        from placement_runner import embedded
        server = embedded.EmbeddedPlacement()
        server.start()
        print(server.pid, server.workdir, flush=True)
        sys.stdin.read()  # until the test kills us
    ''')
    caller = subprocess.Popen([sys.executable, '-c', script],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        pid, workdir = caller.stdout.readline().split()
        pid = int(pid)
        assert helpers.pid_alive(pid) and os.path.isdir(workdir)
        os.kill(caller.pid, sig)
        caller.wait(timeout=helpers.SAFETY_TIMEOUT)
        helpers.wait_until(lambda: not helpers.pid_alive(pid),
                           'the orphaned server exits')
        assert not os.path.exists(workdir)
    finally:
        if caller.poll() is None:
            os.kill(caller.pid, signal.SIGKILL)
            caller.wait()
        caller.stdin.close()
        caller.stdout.close()


# -- the scale backend: PostgreSQL and gunicorn workers --------------------

def _names(pids):
    names = set()
    for pid in pids:
        try:
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                argv = f.read().split(b'\0')
        except FileNotFoundError:
            continue
        # With setproctitle installed (the test extra's ironic brings it)
        # gunicorn titles its processes 'gunicorn: master [...]'.
        names.add('gunicorn' if b'gunicorn' in argv
                  or argv[0].startswith(b'gunicorn:') else
                  os.path.basename(argv[0].decode()))
    return names


def test_postgresql_backend_is_real_and_stops_everything(unique):
    server = embedded.EmbeddedPlacement(backend='postgresql', workers=2)
    with server:
        pid, workdir = server.pid, server.workdir
        started = helpers.descendants(pid)
        assert {'postgres', 'gunicorn'} <= _names(started)
        with open(os.path.join(workdir, 'placement.conf')) as f:
            conf = f.read()
        assert 'postgresql+psycopg2://' in conf
        assert 'sync_on_startup = False' in conf
        client = server.client()
        uuid = writes.create_resource_provider(client, 'pg-' + unique)['uuid']
        assert client.get_provider_traits(uuid) == (set(), 0)
        # Several API workers: requests are served by different processes.
        assert len(_gunicorn_workers(started)) == 2
    assert not helpers.pid_alive(pid)
    assert [p for p in started if helpers.pid_alive(p)] == []
    assert not os.path.exists(workdir)


def _gunicorn_workers(pids):
    return [p for p in pids if _names([p]) == {'gunicorn'}
            and _names([_parent(p)]) == {'gunicorn'}]


def _parent(pid):
    with open('/proc/%d/stat' % pid) as f:
        return int(f.read().rsplit(') ', 1)[1].split()[1])


def test_postgresql_server_killed_outright_takes_its_children_along(
        tmp_path, monkeypatch):
    # A private TMPDIR (0700 under pytest's): as root, the cluster, run by
    # nobody, has to live elsewhere; it must go all the same.
    private_tmp = tmp_path / 'tmp'
    private_tmp.mkdir()
    monkeypatch.setenv('TMPDIR', str(private_tmp))
    server = embedded.EmbeddedPlacement(backend='postgresql', workers=1)
    server.start()
    workdir = server.workdir
    try:
        started = helpers.descendants(server.pid)
        assert {'postgres', 'gunicorn'} <= _names(started)
        cluster = _cluster_dirs(started)
        assert cluster and all(os.path.isdir(d) for d in cluster)
        os.kill(server.pid, signal.SIGKILL)  # no clean-up code runs
    finally:
        server.stop()
    # stop() returns once they are gone: no waiting here.
    assert [p for p in started if helpers.pid_alive(p)] == []
    assert not os.path.exists(workdir)
    assert [d for d in cluster if os.path.exists(d)] == []
    assert list(private_tmp.iterdir()) == []


def _cluster_dirs(pids):
    """The directories PostgreSQL's data directories are in (from the
    ``-D`` of its command line)."""
    found = set()
    for pid in pids:
        try:
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                argv = f.read().decode().split('\0')
        except FileNotFoundError:
            continue
        if '-D' in argv:
            found.add(os.path.dirname(argv[argv.index('-D') + 1]))
    return found


def _placement_db_password(workdir):
    """The password in the served placement.conf's connection URL."""
    from sqlalchemy.engine import url as sa_url

    with open(os.path.join(workdir, 'placement.conf')) as f:
        for line in f:
            if line.startswith('connection = '):
                url = line.split(' = ', 1)[1].strip().replace('$$', '$')
                return sa_url.make_url(url)


def test_postgresql_backend_keeps_its_secrets(tmp_path, monkeypatch):
    """0700/0600 files, a password nobody else knows, on no command line."""
    import psycopg2

    private_tmp = tmp_path / 'tmp'
    private_tmp.mkdir()
    # Traversable: even as root the cluster lives here.
    os.chmod(private_tmp, 0o711)  # noqa: S103 - traverse only
    monkeypatch.setenv('TMPDIR', str(private_tmp))
    with embedded.EmbeddedPlacement(backend='postgresql',
                                    workers=1) as server:
        tree = [server.pid] + helpers.descendants(server.pid)
        url = _placement_db_password(server.workdir)
        assert url.password and len(url.password) >= 16
        for pid in tree:
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                assert url.password.encode() not in f.read(), pid
        cluster = _cluster_dirs(tree)
        assert len(cluster) == 1
        for top in [server.workdir] + sorted(cluster):
            assert stat.S_IMODE(os.stat(top).st_mode) == 0o700, top
            for root, dirs, files in os.walk(top):
                dirs[:] = [d for d in dirs if d != 'pg-binaries']
                for name in dirs + files:
                    mode = stat.S_IMODE(os.lstat(os.path.join(
                        root, name)).st_mode)
                    assert mode & 0o077 == 0, (os.path.join(root, name),
                                               oct(mode))
        socket_dir = url.query['host']
        if os.geteuid() == 0:  # PostgreSQL runs as nobody, in its own
            owner = os.stat(sorted(cluster)[0]).st_uid
            assert owner == __import__('pwd').getpwnam('nobody').pw_uid
        with pytest.raises(psycopg2.OperationalError,
                           match='no password supplied'):
            psycopg2.connect(dbname='placement', user='postgres',
                             host=socket_dir, connect_timeout=10)
        with pytest.raises(psycopg2.OperationalError,
                           match='password authentication failed'):
            psycopg2.connect(dbname='placement', user='postgres',
                             password='guess', host=socket_dir,
                             connect_timeout=10)
        with psycopg2.connect(dbname='placement', user='postgres',
                              password=url.password, host=socket_dir,
                              connect_timeout=10) as conn:
            assert conn.server_version
        conn.close()
    assert list(private_tmp.iterdir()) == []


def test_postgresql_start_up_failure_leaves_nothing_in_tmpdir(
        tmp_path, monkeypatch):
    private_tmp = tmp_path / 'tmp'
    private_tmp.mkdir()
    os.chmod(private_tmp, 0o711)  # noqa: S103 - traverse only
    monkeypatch.setenv('TMPDIR', str(private_tmp))
    server = embedded.EmbeddedPlacement(backend='postgresql', workers=1,
                                        options=['DEFAULT.debug=maybe'])
    with pytest.raises(embedded.EmbeddedPlacementError,
                       match='during start-up'):
        server.start()
    assert server.process is None
    assert list(private_tmp.iterdir()) == []


@pytest.mark.slow
def test_existing_database_url_is_used_and_kept(unique):
    from placement_runner import postgres
    # Not under tmp_path: as root, PostgreSQL runs as nobody, who cannot
    # traverse pytest's private base directory.
    where = tempfile.mkdtemp(prefix='test-database-')
    # A "$" in the password: oslo.config must not read it as a variable.
    password = 'pa$word-' + unique + '$HOME'
    database = postgres.PrivatePostgres(where, password=password)
    database.start()
    url = 'postgresql+psycopg2://postgres:%s@/placement?host=%s' % (
        password, database.socket_dir)
    try:
        with embedded.EmbeddedPlacement(database_url=url,
                                        workers=1) as first:
            uuid = writes.create_resource_provider(
                first.client(), 'kept-' + unique)['uuid']
            # A URL may carry a password: never on anybody's command line.
            for pid in [first.pid] + helpers.descendants(first.pid):
                with open('/proc/%d/cmdline' % pid, 'rb') as f:
                    assert password.encode() not in f.read()
        with embedded.EmbeddedPlacement(database_url=url,
                                        workers=1) as second:
            names = {rp['name'] for rp in
                     second.client().list_resource_providers(uuid=uuid)}
        assert names == {'kept-' + unique}
    finally:
        database.stop()
        shutil.rmtree(where)


@pytest.mark.parametrize('args,message', [
    (['--workers', '2'], 'SQLite is served by one thread'),
    (['--database-url', 'sqlite:////tmp/x.db', '--workers', '3'],
     'SQLite is served by one thread'),
    (['--postgresql', '--workers', '0'], '--workers must be from 1 to 64'),
    (['--postgresql', '--workers', '99999'],
     '--workers must be from 1 to 64, not 99999'),
])
def test_server_usage_errors_are_one_line_exit_2(args, message):
    proc = _server(*args)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert len(err.strip().splitlines()) == 1 and message in err
    assert out == ''


@pytest.mark.parametrize('kwargs,message', [
    ({'backend': 'mysql'}, "unknown Placement backend 'mysql'"),
    ({'workers': 2}, 'SQLite is served by one thread'),
    ({'database_url': 'sqlite:////tmp/x.db', 'workers': 2},
     'SQLite is served by one thread'),
    ({'backend': 'postgresql', 'workers': 0}, 'from 1 to 64'),
    ({'backend': 'postgresql', 'workers': 99999}, 'from 1 to 64, not 99999'),
    ({'database_url': 'nonsense://'}, 'database URL nonsense://: '),
    ({'database_url': 'not a url'}, 'not a SQLAlchemy URL'),
])
def test_arguments_that_cannot_work_are_refused_before_anything_starts(
        kwargs, message):
    with pytest.raises(embedded.EmbeddedPlacementUsageError, match=message):
        embedded.EmbeddedPlacement(**kwargs)


@pytest.mark.parametrize('url', [
    'postgresql+psycopg2://x:s3cret$pw@127.0.0.1:1/nope',
    'postgresql+psycopg2://x:s3cret$pw@/nope?host=/nonexistent-socket-dir',
])
def test_database_that_does_not_answer_is_one_line(url):
    """Well-formed, but nothing answers: one line naming the database,
    its password masked, and no server started."""
    server = embedded.EmbeddedPlacement(database_url=url)
    with pytest.raises(embedded.EmbeddedPlacementError) as err:
        server.start()
    message = str(err.value)
    assert not isinstance(err.value, embedded.EmbeddedPlacementUsageError)
    assert message.startswith('cannot connect to the database '
                              'postgresql+psycopg2://x:***@')
    assert '\n' not in message and 's3cret' not in message
    assert server.process is None


def test_start_failure_shows_server_log():
    server = embedded.EmbeddedPlacement(
        database_url='sqlite:////nonexistent-dir/placement.db')
    with pytest.raises(embedded.EmbeddedPlacementError) as err:
        server.start()
    assert 'last server log lines' in str(err.value)
    assert 'unable to open database file' in str(err.value)
    assert server.process is None


def test_missing_placement_names_the_distribution(monkeypatch):
    monkeypatch.setattr(embedded.importlib.util, 'find_spec',
                        lambda name: None)
    with pytest.raises(embedded.EmbeddedPlacementError,
                       match=r'pip install "image-type-filter-demo"'):
        embedded.EmbeddedPlacement().start()


def _server(*args):
    return subprocess.Popen(
        [sys.executable, '-m', 'placement_runner.server',
         *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize('stop', ['sigterm', 'stdin-closed'])
def test_server_in_a_users_directory_deletes_nothing(tmp_path, stop):
    conf = tmp_path / 'placement.conf'
    conf.write_text(embedded_server.placement_conf(
        'sqlite:///%s' % (tmp_path / 'placement.db')))
    mine = tmp_path / 'my-notes.txt'
    mine.write_text('keep me')
    proc = _server('--config-dir', str(tmp_path), '--watch-stdin')
    try:
        assert proc.stdout.readline().split() == ['WORKDIR', str(tmp_path)]
        word, port = proc.stdout.readline().split()
        assert word == 'READY'
        answer = requests.get('http://127.0.0.1:%s/' % port, timeout=30)
        assert answer.status_code == 200
        if stop == 'sigterm':
            proc.send_signal(signal.SIGTERM)
        else:
            proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert mine.read_text() == 'keep me'
    assert conf.is_file() and (tmp_path / 'placement.db').is_file()


def test_server_without_placement_conf_is_one_line_exit_2(tmp_path):
    mine = tmp_path / 'my-notes.txt'
    mine.write_text('keep me')
    proc = _server('--config-dir', str(tmp_path))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err.strip().splitlines() == [
        'embedded_server: error: %s has no placement.conf' % tmp_path]
    assert out == ''
    assert sorted(os.listdir(tmp_path)) == ['my-notes.txt']
