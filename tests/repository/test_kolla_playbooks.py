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

"""The kolla-ansible playbooks, run by the ansible-playbook kolla-ansible
22.2.0 runs with (ansible-core from the package index:
``tests/deploy_tools.py``), on a host of an inventory in a directory of
the test's own (``ansible_connection=local``, kolla's directories moved
under it by the playbooks' own variables).

``contrib/kolla/virt-capabilities.yml`` lays out the reporter's files
and unit as the page says, and changes nothing when run again in check
mode; it refuses an ironic compute host. ``contrib/kolla/
virt-capabilities-remove.yml`` runs ``virt-capabilities remove`` in a
container of nova_compute's image (a stand-in engine prints what it is
given, and whether the reporter's files were still there) before it
removes the unit, the files and the volume; in check mode it leaves
everything in place. What ``remove`` does in that container, with a real
Placement, is in ``test_kolla_reporter.py``. The tasks tagged
``service`` talk to systemd, which this machine does not run: they are
skipped, and systemd-analyze reads the unit instead
(``test_kolla_ansible.py``).
"""

import json
import os
import re
import subprocess

import pytest
import yaml

from tests import deploy_tools
from tests import helpers
from tests.repository import test_kolla_reporter as reporter

pytestmark = pytest.mark.slow

KOLLA = os.path.join(helpers.REPO, 'contrib', 'kolla')
DEPLOY = os.path.join(KOLLA, 'virt-capabilities.yml')
REMOVE = os.path.join(KOLLA, 'virt-capabilities-remove.yml')
IMAGE = 'registry.example/kolla/nova-compute:2026.2-itf'


@pytest.fixture(scope='module')
def venv(tmp_path_factory):
    return deploy_tools.install('2026.1',
                                str(tmp_path_factory.mktemp('ka-play')))


class Host:
    """A compute host in a directory: /etc/kolla, /etc/systemd/system,
    kolla-ansible's globals.yml, and an engine stand-in that logs its
    calls and keeps the reporter's volume as a file (``docker run
    --volume NAME:...`` makes it; ``volume inspect`` exits 1 without it,
    as docker does; ``run`` fails while ``fail_run`` exists)."""

    def __init__(self, base):
        self.base = base
        self.kolla = base / 'etc' / 'kolla'
        self.systemd = base / 'etc' / 'systemd' / 'system'
        self.systemd.mkdir(parents=True)
        (self.kolla / 'nova-compute').mkdir(parents=True)
        self.calls = base / 'engine-calls'
        self.volume = base / 'volume-virt_capabilities'
        self.fail_run = base / 'fail_run'
        self.globals = base / 'globals.yml'
        self.globals.write_text('---\nkolla_base_distro: "rocky"\n')
        self.engine = base / 'docker'
        self.engine.write_text(
            '#!/bin/sh\n'
            'echo "$*" >> %(calls)s\n'
            'case "$1 $2" in\n'
            '"volume inspect") [ -f %(volume)s ] ;;\n'
            '"volume rm") rm %(volume)s ;;\n'
            'inspect*) echo %(image)s ;;\n'
            'run*) [ -f %(conf)s ] && [ -f %(unit)s ] && echo "files there"'
            ' >> %(calls)s; touch %(volume)s; [ ! -f %(fail)s ] ;;\n'
            'esac\n' % {
                'calls': self.calls, 'image': IMAGE, 'volume': self.volume,
                'fail': self.fail_run,
                'conf': self.kolla / 'virt-capabilities' /
                'virt-capabilities.conf',
                'unit': self.systemd /
                'kolla-virt_capabilities-container.service'})
        self.engine.chmod(0o755)

    def playbook(self, venv, playbook, *args, groups='', check=False,
                 kolla_from_globals=False):
        inventory = self.base / 'inventory'
        inventory.write_text(
            '[compute]\ncompute-1 ansible_connection=local\n'
            '[nova-compute-ironic]\n%s\n' % groups)
        home = self.base / 'home'
        home.mkdir(exist_ok=True)
        env = dict(os.environ, HOME=str(home),
                   ANSIBLE_LOCAL_TEMP=str(home / 'tmp'),
                   ANSIBLE_REMOTE_TEMP=str(home / 'tmp'),
                   ANSIBLE_PYTHON_INTERPRETER=os.path.join(venv, 'bin',
                                                           'python'),
                   ANSIBLE_NOCOLOR='True')
        argv = [os.path.join(venv, 'bin', 'ansible-playbook'), '-i',
                str(inventory), playbook, '--skip-tags', 'service',
                # Root already; no sudo on this machine.
                '-e', 'ansible_become=false',
                '-e', 'virt_capabilities_globals=%s' % self.globals,
                '-e', 'virt_capabilities_systemd_dir=%s' % self.systemd,
                '-e', 'virt_capabilities_engine=%s' % self.engine]
        if kolla_from_globals:
            self.globals.write_text('---\nnode_config_directory: "%s"\n'
                                    % self.kolla)
        else:
            argv += ['-e', 'node_config_directory=%s' % self.kolla]
        if check:
            argv.append('--check')
        return subprocess.run(argv + list(args), capture_output=True,
                              text=True, timeout=300, env=env,
                              cwd=str(self.base))


def test_the_playbooks_run_where_kolla_ansible_runs_nova_compute(venv):
    """kolla-ansible's nova-cell role: nova_compute's group and
    nova_compute_ironic's, the defaults the playbooks fall back on."""
    with open(os.path.join(deploy_tools.share(
            venv, 'kolla-ansible', 'ansible', 'roles', 'nova-cell',
            'defaults', 'main.yml'))) as f:
        defaults = yaml.safe_load(f)
    services = defaults['nova_cell_services']
    assert services['nova-compute']['group'] == \
        '{{ nova_cell_compute_group }}'
    assert services['nova-compute-ironic']['group'] == \
        '{{ nova_cell_compute_ironic_group }}'
    for path in (DEPLOY, REMOVE):
        with open(path) as f:
            [play] = yaml.safe_load(f)
        assert play['hosts'] == "{{ nova_cell_compute_group | " \
            "default('%s') }}" % defaults['nova_cell_compute_group']
    with open(DEPLOY) as f:
        assert "nova_cell_compute_ironic_group | default('%s')" % \
            defaults['nova_cell_compute_ironic_group'] in f.read()


def recap(output):
    [line] = re.findall(r'^compute-1 +: (.*)$', output, re.M)
    return dict((k, int(v)) for k, v in re.findall(r'(\w+)=(\d+)', line))


@pytest.fixture
def host(tmp_path):
    return Host(tmp_path)


def test_the_deploy_lays_out_what_the_page_says(venv, host):
    proc = host.playbook(venv, DEPLOY)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ours = host.kolla / 'virt-capabilities'
    with open(reporter.CONFIG_JSON) as f:
        assert (ours / 'config.json').read_text() == f.read()
    with open(os.path.join(KOLLA, 'virt-capabilities',
                           'virt-capabilities.conf')) as f:
        assert (ours / 'virt-capabilities.conf').read_text() == f.read()
    unit = host.systemd / 'kolla-virt_capabilities-container.service'
    assert unit.read_text() == reporter.unit_text()
    assert oct(ours.stat().st_mode & 0o777) == '0o770'
    # Run again in check mode: nothing would change.
    again = host.playbook(venv, DEPLOY, check=True)
    assert again.returncode == 0, again.stdout[-3000:]
    assert recap(again.stdout)['changed'] == 0
    assert not host.calls.exists()  # it starts no container itself


def test_the_deploy_in_check_mode_writes_nothing(venv, host):
    proc = host.playbook(venv, DEPLOY, check=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert recap(proc.stdout)['changed'] >= 3
    assert not (host.kolla / 'virt-capabilities').exists()
    assert list(host.systemd.iterdir()) == []


def test_the_deploy_refuses_an_ironic_compute_host(venv, host):
    proc = host.playbook(venv, DEPLOY, groups='compute-1')
    assert proc.returncode != 0
    assert 'is in nova-compute-ironic' in proc.stdout
    assert 'One reporter for many nodes' in proc.stdout
    assert not (host.kolla / 'virt-capabilities').exists()


def deployed_and_ran(venv, host):
    """Deployed, and the reporter's container ran (its volume made)."""
    assert host.playbook(venv, DEPLOY).returncode == 0
    host.volume.write_text('')


def test_the_removal_takes_the_traits_off_first(venv, host):
    deployed_and_ran(venv, host)
    proc = host.playbook(venv, REMOVE)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    calls = host.calls.read_text().splitlines()
    assert calls[0] == 'volume inspect virt_capabilities'
    assert calls[1] == 'inspect --format {{.Config.Image}} nova_compute'
    run = calls[2].split()
    # nova_compute's image, with the reporter's mounts but its own
    # instructions (virt-capabilities remove), while the reporter's files
    # are still in place.
    assert run[:3] == ['run', '--rm', '--name']
    assert run[-1] == IMAGE
    volumes = [run[i + 1] for i, w in enumerate(run) if w == '--volume']
    expected = []
    for source, target, options in reporter.unit_volumes():
        spec = ':'.join([source, target] + options)
        if source == '/etc/kolla/virt-capabilities/':
            # Its own instructions where kolla's start script reads them,
            # the reporter's directory beside, for its own file.
            expected += [
                spec.replace(source, '%s/virt-capabilities-remove/'
                             % host.kolla),
                '%s/virt-capabilities/:/var/lib/kolla/virt-capabilities/:ro'
                % host.kolla]
        else:
            expected.append(spec.replace('/etc/kolla/', '%s/' % host.kolla))
    assert volumes == expected
    assert calls[3] == 'files there'
    assert calls[4:] == ['volume rm virt_capabilities']
    # Then the unit and the files are gone.
    assert list(host.systemd.iterdir()) == []
    assert sorted(os.listdir(host.kolla)) == ['nova-compute']
    assert not host.volume.exists()


def test_the_removal_again_changes_nothing(venv, host):
    """Run twice, or on a host that never had the reporter: it only
    looks (no container, no new volume, no directory) and exits 0."""
    deployed_and_ran(venv, host)
    assert host.playbook(venv, REMOVE).returncode == 0
    for _ in range(2):
        host.calls.unlink()
        proc = host.playbook(venv, REMOVE)
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert recap(proc.stdout)['changed'] == 0
        assert host.calls.read_text().splitlines() == [
            'volume inspect virt_capabilities']
        assert not host.volume.exists()
        assert sorted(os.listdir(host.kolla)) == ['nova-compute']
        assert list(host.systemd.iterdir()) == []


def test_the_removal_on_a_clean_host_changes_nothing(venv, host):
    proc = host.playbook(venv, REMOVE)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert recap(proc.stdout)['changed'] == 0
    assert host.calls.read_text().splitlines() == [
        'volume inspect virt_capabilities']
    assert sorted(os.listdir(host.kolla)) == ['nova-compute']


def test_a_failed_removal_is_run_again_as_it_is(venv, host):
    deployed_and_ran(venv, host)
    host.fail_run.write_text('')
    failed = host.playbook(venv, REMOVE)
    assert failed.returncode != 0
    # The records, the files and the unit stay for the next run.
    assert host.volume.exists()
    assert (host.kolla / 'virt-capabilities' / 'config.json').exists()
    assert len(list(host.systemd.iterdir())) == 1
    host.fail_run.unlink()
    proc = host.playbook(venv, REMOVE)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not host.volume.exists()
    assert sorted(os.listdir(host.kolla)) == ['nova-compute']


def test_the_playbooks_read_kolla_ansibles_globals(venv, host):
    """node_config_directory from globals.yml, as kolla-ansible reads
    it, and nothing on the command line."""
    proc = host.playbook(venv, DEPLOY, kolla_from_globals=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (host.kolla / 'virt-capabilities' / 'config.json').exists()
    host.volume.write_text('')
    proc = host.playbook(venv, REMOVE, kolla_from_globals=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(os.listdir(host.kolla)) == ['nova-compute']


def test_the_removal_in_check_mode_leaves_everything(venv, host):
    deployed_and_ran(venv, host)
    proc = host.playbook(venv, REMOVE, check=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # It looks for the volume; no container run, no volume removed.
    assert host.calls.read_text().splitlines() == [
        'volume inspect virt_capabilities']
    assert host.volume.exists()
    assert (host.kolla / 'virt-capabilities' / 'config.json').exists()
    assert len(list(host.systemd.iterdir())) == 1


def test_the_remove_instructions_are_the_reporters_but_the_command():
    """The same files copied to the same places (the reporter's own file
    from its directory, mounted beside), so remove reads the same
    configuration (and the reporter's name in the state file, its
    nova-compute's host), and runs remove instead of report."""
    with open(reporter.CONFIG_JSON) as f:
        report = json.load(f)
    with open(os.path.join(KOLLA, 'virt-capabilities-remove',
                           'config.json')) as f:
        remove = json.load(f)
    moved = '/var/lib/kolla/virt-capabilities/virt-capabilities.conf'
    for entry in remove['config_files']:
        if entry['source'] == moved:
            entry['source'] = '/var/lib/kolla/config_files/' \
                'virt-capabilities.conf'
    assert {k: v for k, v in remove.items() if k != 'command'} == \
        {k: v for k, v in report.items() if k != 'command'}
    files = re.findall(r'--config-file (\S+)', report['command'])
    assert remove['command'] == 'virt-capabilities remove ' + ' '.join(
        '--config-file %s' % f for f in files)


@pytest.mark.parametrize('playbook', [DEPLOY, REMOVE])
def test_ansible_playbook_checks_the_syntax(venv, host, playbook):
    proc = host.playbook(venv, playbook, '--syntax-check')
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not host.calls.exists()
