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

"""The reporter in its kolla container finds nova-compute's provider.

The recipe of ``doc/source/install/kolla-ansible.rst``: the container that
``contrib/kolla/kolla-virt_capabilities-container.service`` starts, with
the mounts its ``--volume`` options give, the files kolla's start script
copies as ``contrib/kolla/virt-capabilities/config.json`` says, and the
command that file names. Here the container's file system is a directory:
each mount a link to a directory standing for the host's (or a named
volume), each copy a real copy, and every absolute path of the command and
of the copied ini files taken inside that directory. The reporter then
runs as the documented service against a real Placement, with a
``nova.conf`` that has the paths kolla-ansible writes (``KOLLA_NOVA_CONF``,
checked against kolla-ansible 22.2.0's own template in
``test_kolla_ansible.py``), and a provider named unlike any host, so that
only the ``compute_id`` file can lead to it.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import uuid

import pytest

from placement_runner import writes
from tests import helpers
from tests.repository import test_config_blocks

REPO = helpers.REPO
KOLLA = os.path.join(REPO, 'contrib', 'kolla')
UNIT = os.path.join(KOLLA, 'kolla-virt_capabilities-container.service')
CONFIG_JSON = os.path.join(KOLLA, 'virt-capabilities', 'config.json')
#: virt-capabilities-remove.yml's one-off container: its instructions, and
#: the mounts it adds to the unit's (the reporter's own directory, for its
#: own file) in place of the reporter's instructions.
REMOVE_JSON = os.path.join(KOLLA, 'virt-capabilities-remove', 'config.json')
REMOVE_MOUNTS = {
    '/etc/kolla/virt-capabilities-remove/': '/var/lib/kolla/config_files/',
    '/etc/kolla/virt-capabilities/': '/var/lib/kolla/virt-capabilities/'}
#: The reporter's own file, as virt-capabilities.yml installs it.
SHIPPED_CONF = os.path.join(KOLLA, 'virt-capabilities',
                            'virt-capabilities.conf')
PAGE = 'doc/source/install/kolla-ansible.rst'
#: kolla-ansible 22.2.0 (2026.1): where it writes nova-compute's files on
#: the host (node_config_directory, /etc/kolla, + the service), and the
#: container paths its nova-cell nova.conf.j2 gives nova-compute.
NOVA_COMPUTE_CONFIG_DIR = '/etc/kolla/nova-compute/'
KOLLA_NOVA_CONF = {'log_dir': '/var/log/kolla/nova',
                   'state_path': '/var/lib/nova'}
#: What the image's start script makes before the command runs: nova-base's
#: kolla_extend_start creates nova's log directory (kolla 22.2.0 and
#: 23.0.0; checked in test_kolla.py).
EXTEND_START_DIRS = ('/var/log/kolla/nova',)
#: The reporter's own file, where the docs have the operator put it.
REPORTER_CONF = '/etc/kolla/virt-capabilities/virt-capabilities.conf'


def unit_text():
    with open(UNIT) as f:
        return f.read()


def unit_volumes():
    """[(source, container path, options)] of the unit's docker run."""
    found = []
    for spec in re.findall(r'--volume (\S+)', unit_text()):
        source, target, *options = spec.split(':')
        found.append((source, target, options))
    return found


def kolla_config():
    with open(CONFIG_JSON) as f:
        return json.load(f)


class Container:
    """The container's file system as a directory: ``root``; the host's
    directories and the named volumes beside it."""

    def __init__(self, base):
        self.base = base
        self.root = base / 'container'
        self.host = base / 'host'
        self.volumes = base / 'volumes'

    def inside(self, path):
        return self.root / path.lstrip('/')

    def on_host(self, path):
        return self.host / path.lstrip('/')

    def mount(self, volumes=None):
        """Each directory mount as a link (a file mount, /etc/localtime,
        changes nothing the reporter reads): the unit's, or ``volumes``
        ([(source, target, options)])."""
        for source, target, _ in volumes or unit_volumes():
            if not target.endswith('/'):
                continue
            if source.startswith('/'):
                where = self.on_host(source)
            else:
                where = self.volumes / source
            where.mkdir(parents=True, exist_ok=True)
            link = self.inside(target.rstrip('/'))
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(where, target_is_directory=True)

    def start(self, config):
        """What kolla's start script does: kolla_set_configs copies each
        file config.json names (an optional one only if there), then
        kolla_extend_start makes nova's log directory; returns the command
        to run. Absolute paths are taken inside the container."""
        for entry in config['config_files']:
            source = self.inside(entry['source'])
            if not source.exists():
                assert entry.get('optional'), 'missing: %s' % entry['source']
                continue
            dest = self.inside(entry['dest'])
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
            if dest.suffix == '.conf':
                dest.write_text(re.sub(r'^(\s*\w+\s*=\s*)/',
                                       r'\g<1>%s/' % self.root,
                                       dest.read_text(), flags=re.M))
        for path in EXTEND_START_DIRS:
            self.inside(path).mkdir(parents=True, exist_ok=True)
        return [str(self.inside(word)) if word.startswith('/') else word
                for word in shlex.split(config['command'])]


def reporter_conf_block():
    with open(SHIPPED_CONF) as f:
        return f.read()


@pytest.fixture
def deployed(tmp_path, placement, unique):
    """A compute node as kolla-ansible leaves it, the reporter's files
    installed as documented, and the container started."""
    client = placement.client()
    node_uuid = str(uuid.uuid4())
    writes.create_resource_provider(client, 'kolla-node-%s' % unique,
                                    uuid=node_uuid)
    custom = 'CUSTOM_KOLLA_%s' % unique.upper()
    container = Container(tmp_path)
    nova_compute = container.on_host(NOVA_COMPUTE_CONFIG_DIR)
    nova_compute.mkdir(parents=True)
    (nova_compute / 'nova.conf').write_text(
        '[DEFAULT]\nlog_dir = %(log_dir)s\nstate_path = %(state_path)s\n'
        'compute_driver = libvirt.LibvirtDriver\n\n' % KOLLA_NOVA_CONF
        + placement.nova_conf_section())
    (nova_compute / 'compute_id').write_text(node_uuid)  # no newline
    ours = container.on_host(os.path.dirname(REPORTER_CONF))
    ours.mkdir(parents=True)
    shutil.copyfile(CONFIG_JSON, ours / 'config.json')
    (ours / os.path.basename(REPORTER_CONF)).write_text(
        reporter_conf_block() + 'custom_traits = %s\n' % custom)
    container.mount()
    argv = container.start(kolla_config())
    return container, argv, client, node_uuid, custom


def console_script(argv):
    """The installed command of this test run, for the documented name."""
    assert argv[0] == 'virt-capabilities'
    return [os.path.join(os.path.dirname(sys.executable), argv[0])] + \
        argv[1:]


def test_the_container_reports_for_nova_computes_provider(deployed):
    container, argv, client, node_uuid, custom = deployed
    logs = container.volumes / 'kolla_logs' / 'nova'
    log = logs / 'virt-capabilities.log'
    with helpers.Child(console_script(argv)) as child:

        def synced():
            assert child.process.poll() is None, child.err.text()
            return log.exists() and 'sync done' in log.read_text()
        helpers.wait_until(synced, 'a sync in %s' % log)
        child.send(signal.SIGTERM)
        assert child.finish() == 0, child.err.text()
    # nova-compute's provider, found from the compute_id file the
    # container's start copied beside nova.conf.
    assert custom in client.get_provider_traits(node_uuid)[0]
    # The log went to kolla's log volume, under the nova.conf's log_dir;
    # the state to the reporter's own volume.
    assert 'sync done: 1 provider(s) checked, 1 changed' in log.read_text()
    state = container.volumes / 'virt_capabilities' / \
        'virt_capabilities.json'
    assert node_uuid in state.read_text() and custom in state.read_text()
    assert not (container.volumes / 'kolla_logs' / 'nova' /
                'virt_capabilities.json').exists()
    # The status file too, where monitoring on the host reads it; nothing
    # in the container's own state_path, which no volume keeps.
    status = json.loads((container.volumes / 'virt_capabilities' /
                         'virt_capabilities_status.json').read_text())
    assert status['result'] == 'ok' and status['last_ok']
    assert not container.inside(KOLLA_NOVA_CONF['state_path']).exists()


def remove_volumes():
    """The one-off container's mounts, as virt-capabilities-remove.yml
    gives them: the unit's, the reporter's instructions replaced."""
    found = []
    for source, target, options in unit_volumes():
        if source == '/etc/kolla/virt-capabilities/':
            found += [(s, t, ['ro']) for s, t in REMOVE_MOUNTS.items()]
        else:
            found.append((source, target, options))
    return found


def test_the_one_off_remove_takes_off_what_the_container_set(deployed,
                                                             tmp_path):
    """The reporter syncs, stops; then remove runs in a new container
    with the removal's mounts and instructions, on the same volumes: the
    custom trait comes off, the status file goes and the state file says
    a remove emptied it; run again, the removal changes nothing."""
    container, argv, client, node_uuid, custom = deployed
    # One sync, as the service's first cycle (a one-shot report).
    once = [w for w in argv if w not in ('--interval', '300', '--wait')]
    with helpers.Child(console_script(once)) as child:
        assert child.finish() == 0, child.err.text()
    assert custom in client.get_provider_traits(node_uuid)[0]
    volume = container.volumes / 'virt_capabilities'
    assert (volume / 'virt_capabilities_status.json').exists()
    # A new container: the same paths inside, nothing of the old one's
    # file system but the mounts (the reporter's name in the state file
    # is its nova-compute's host, from the same nova.conf in both).
    container.root.rename(tmp_path / 'the-reporters-container')
    removal = Container(tmp_path)
    with open(REMOVE_JSON) as f:
        config = json.load(f)
    removal_host = removal.on_host('/etc/kolla/virt-capabilities-remove')
    removal_host.mkdir(parents=True)
    shutil.copyfile(REMOVE_JSON, removal_host / 'config.json')
    removal.mount(remove_volumes())
    remove = removal.start(config)
    assert remove[:2] == ['virt-capabilities', 'remove']
    with helpers.Child(console_script(remove)) as child:
        assert child.finish() == 0, child.err.text()
    assert custom not in client.get_provider_traits(node_uuid)[0]
    state = json.loads((volume / 'virt_capabilities.json').read_text())
    assert state['providers'] == {} and state['emptied_by_remove'] is True
    assert not (volume / 'virt_capabilities_status.json').exists()
    written = sorted((p.name, p.stat().st_mtime_ns)
                     for p in volume.iterdir())
    with helpers.Child(console_script(remove)) as child:
        assert child.finish() == 0, child.err.text()
    assert sorted((p.name, p.stat().st_mtime_ns)
                  for p in volume.iterdir()) == written


def test_the_provider_comes_from_the_compute_id_file(deployed):
    """``show`` (offline) names where the provider came from: the copy of
    kolla-ansible's compute_id beside the container's nova.conf."""
    container, argv, _, node_uuid, _ = deployed
    files = [w for i, w in enumerate(argv) if argv[i - 1] == '--config-file']
    show = [os.path.join(os.path.dirname(sys.executable),
                         'virt-capabilities'), 'show', '-f', 'json']
    for path in files:
        show += ['--config-file', path]
    with helpers.Child(show) as child:
        assert child.finish() == 0, child.err.text()
        [provider] = json.loads(child.out.text())['providers']
    assert provider['kind'] == 'uuid' and provider['value'] == node_uuid
    assert provider['source'] == 'compute_id file %s' % container.inside(
        '/etc/nova/compute_id')


def test_the_container_mounts_nothing_of_nova_computes_state():
    """Nova's instance volume (the servers' disks) stays out of it; the
    host's configuration only read."""
    targets = {target for _, target, _ in unit_volumes()}
    assert KOLLA_NOVA_CONF['state_path'] + '/' not in targets
    assert 'nova_compute' not in {source for source, _, _ in unit_volumes()}
    for source, _, options in unit_volumes():
        if source.startswith('/etc/'):
            assert options == ['ro'], source


# -- one reporter for many nodes -------------------------------------------

def central_block():
    return {caption: body for page, caption, body
            in test_config_blocks.captioned_doc_blocks()
            if page == PAGE}['/etc/virt-capabilities/compute-07.conf']


def test_a_central_reporter_reports_for_the_node_it_names(tmp_path,
                                                          placement,
                                                          unique):
    """The page's file for one node, its --os-cloud and --provider, from
    a machine that is not the node: the provider gets the node's
    architecture trait (armv7l: HW_ARCH_ARMV7, which nova-compute never
    writes) and its custom trait, and nothing of this machine's."""
    client = placement.client()
    node_uuid = str(uuid.uuid4())
    writes.create_resource_provider(client, 'compute-07-%s' % unique,
                                    uuid=node_uuid)
    before, _ = client.get_provider_traits(node_uuid)
    conf = tmp_path / 'compute-07.conf'
    conf.write_text(central_block().replace(
        '/var/lib/virt-capabilities/', str(tmp_path) + '/'))
    clouds = tmp_path / 'clouds.yaml'
    clouds.write_text(
        'clouds:\n  image-type-reporter:\n    auth_type: admin_token\n'
        '    auth:\n      endpoint: %s\n      token: %s\n'
        % (placement.endpoint, placement.token))
    proc = helpers.Child(
        [os.path.join(os.path.dirname(sys.executable), 'virt-capabilities'),
         'report', '--os-cloud', 'image-type-reporter', '--config-file',
         str(conf), '--provider', node_uuid],
        env=helpers.clean_env(OS_CLIENT_CONFIG_FILE=str(clouds)))
    with proc:
        assert proc.finish() == 0, proc.err.text()
    after, _ = client.get_provider_traits(node_uuid)
    assert after - before == {'HW_ARCH_ARMV7', 'CUSTOM_TROVE'}
    assert os.uname().machine != 'armv7l'  # not this machine's
    assert 'HW_ARCH_ARMV7' in (tmp_path / 'compute-07.json').read_text()


def test_the_units_shell_line_runs_nova_computes_image(tmp_path):
    """The ExecStart as systemd hands it to sh (continuation lines joined,
    "$$" made "$"), run by sh with a stand-in engine that answers
    ``inspect`` with an image and prints what ``run`` was given: the
    quoting holds, and the image run is the one nova_compute runs."""
    text = unit_text().replace('\\\n', ' ')
    [line] = re.findall(r'^ExecStart=(.*)$', text, re.M)
    argv = shlex.split(line.replace('$$', '$'))
    assert argv[:2] == ['/bin/sh', '-c']
    engine = tmp_path / 'engine'
    engine.write_text(
        '#!/bin/sh\n'
        'if [ "$1" = inspect ]; then\n'
        '  [ "$2 $3 $4" = "--format {{.Config.Image}} nova_compute" ] || '
        'exit 3\n'
        '  echo registry.example/kolla/nova-compute:2026.1-itf\n'
        'else\n'
        '  for arg in "$@"; do echo "$arg"; done\n'
        'fi\n')
    engine.chmod(0o755)
    script = argv[2].replace('/usr/bin/docker', str(engine))
    proc = helpers.Child(['/bin/sh', '-c', script])
    with proc:
        assert proc.finish() == 0, proc.err.text()
    given = proc.out.text().splitlines()
    assert given[0] == 'run'
    assert given[-1] == 'registry.example/kolla/nova-compute:2026.1-itf'
    volumes = [given[i + 1] for i, a in enumerate(given) if a == '--volume']
    assert volumes == [':'.join([s, t] + o) for s, t, o in unit_volumes()]


def test_on_the_host_kollas_log_dir_ends_it_with_one_line(tmp_path, listener):
    """kolla's nova.conf read on the host: its log_dir is the container's
    (here under a root with no such directory), and the reporter stops at
    start-up with one line naming the option and the path, exit 2, before
    any request."""
    log_dir = tmp_path / 'host' / KOLLA_NOVA_CONF['log_dir'].lstrip('/')
    conf = tmp_path / 'nova.conf'
    conf.write_text('[DEFAULT]\nlog_dir = %s\nstate_path = %s\n'
                    'compute_driver = libvirt.LibvirtDriver\nhost = h1\n\n'
                    % (log_dir, tmp_path) + listener.nova_conf_section())
    for extra in ((), ('--interval', '60')):
        proc = subprocess.run(
            console_script(['virt-capabilities', 'report', '--config-file',
                            str(conf), *extra]),
            capture_output=True, text=True, timeout=helpers.SAFETY_TIMEOUT,
            env=helpers.clean_env())
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (
            'ERROR virt-capabilities: [DEFAULT] log_dir %s: cannot open the '
            'log file %s/virt-capabilities.log there (No such file or '
            'directory); create the directory, or set log_dir (or log_file) '
            'to one this host has\n' % (log_dir, log_dir))
    assert listener.requests == []


def test_monitoring_reads_the_status_file_where_the_volume_keeps_it():
    """The host path the monitoring page, the recipes and this page give
    is the shipped status_file under the named volume it is on (docker's
    default data root)."""
    [status_file] = re.findall(r'^status_file = (\S+)$',
                               reporter_conf_block(), re.M)
    [(volume, target)] = [(s, t) for s, t, _ in unit_volumes()
                          if status_file.startswith(t)]
    assert not volume.startswith('/')  # a named volume, outliving it
    host_path = '/var/lib/docker/volumes/%s/_data/%s' % (
        volume, status_file[len(target):])
    for path in (os.path.join(REPO, 'doc', 'source', 'admin',
                              'monitoring.rst'),
                 os.path.join(REPO, PAGE),
                 os.path.join(REPO, 'contrib', 'monitoring',
                              'check_virt_capabilities_status'),
                 os.path.join(REPO, 'contrib', 'monitoring',
                              'virt_capabilities_status_textfile')):
        with open(path) as f:
            assert host_path in f.read(), path
