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

"""devstack/plugin.sh run with devstack's own functions, layout by layout.

``test_devstack_plugin`` checks each phase against recording stubs; here
the plugin runs in a bash that sourced upstream devstack's ``functions``
and ``lib/nova`` (the snapshot in ``../shared/upstream``, unpacked per
test), in stack.sh's order: devstack's ``iniset`` writes a real
``nova.conf``, devstack's ``async_runfunc`` runs a concurrent
``configure_neutron_nova``, and devstack's own ``start_nova_compute``
makes the config files and names the nova-compute services. Only what
would start or stop a process is replaced: ``run_process`` and
``stop_process`` record their arguments, ``virt-capabilities`` is a
recording script on ``PATH``, ``sudo`` runs its command as the test's
user and ``uuidgen`` reads the kernel's.
"""

import configparser
import os
import subprocess

from oslo_config import cfg
import pytest

from tests import helpers
from tests.repository import test_config_blocks as config_blocks

REPO = helpers.REPO
SNAPSHOTS = {
    '2026.2': 'devstack-master-493835a61a.tar.gz',
    '2026.1': 'devstack-stable-2026.1-da2f4d73f5.tar.gz',
}

#: stack.sh's order, from ``configure_neutron_nova`` going to the background
#: to the extra phase, then unstack.sh's plugin phase.
HARNESS = r'''
set -o errexit  # as stack.sh sets it (no pipefail)
TOP_DIR=$DEVSTACK
source "$DEVSTACK/functions"
# What stackrc would have set for this test; nothing here starts anything.
os_PACKAGE=deb
GLOBAL_VENV=False
CELLSV2_SETUP=singleconductor
NOVNC_FROM_PACKAGE=True
NOVA_LIBVIRT_TB_CACHE_SIZE=0
LIBVIRT_TYPE=qemu
SERVICE_HOST=127.0.0.1
source "$DEVSTACK/lib/nova"
# lib/nova keeps its files in /etc/nova: the same names, in the test's dir.
NOVA_CONF_DIR=$ETC
NOVA_CONF=$NOVA_CONF_DIR/nova.conf
NOVA_CPU_CONF=$NOVA_CONF_DIR/nova-cpu.conf
NOVA_FAKE_CONF=$NOVA_CONF_DIR/nova-fake.conf

record() { echo "$*" >> "$CALLS"; }
run_process() { record run_process "$1" "$2"; }
stop_process() { record stop_process "$1"; }
sudo() { "$@"; }
uuidgen() { cat /proc/sys/kernel/random/uuid; }

# create_nova_conf's filter line
iniset "$NOVA_CONF" filter_scheduler enabled_filters "$NOVA_FILTERS"

# configure_neutron_nova as the concurrent writer: its read-modify-write
# of nova.conf (each of its iniset calls is one, sed -i) is open from
# before the plugins' post-config phase until stack.sh joins it.
function configure_neutron_nova {
    local draft=$NOVA_CONF.neutron
    cp "$NOVA_CONF" "$draft"
    echo started > "$STARTED"
    iniset "$draft" neutron region_name RegionOne
    iniset "$draft" neutron auth_type password
    local fifo=$DEST/async/configure_neutron_nova.fifo
    # Finish only once joined: async_wait's WAKEUP arrives here (and a
    # second one is left for async_inner, which reads it after us).
    cat "$fifo" > /dev/null
    echo WAKEUP > "$fifo" &
    mv "$draft" "$NOVA_CONF"
}

source "$REPO/devstack/settings"
run_plugin() { source "$REPO/devstack/plugin.sh" "$@"; }

run_plugin stack pre-install
async_init
async_runfunc configure_neutron_nova
read -r _ < "$STARTED"
run_plugin stack post-config
async_wait configure_neutron_nova
start_nova_compute
run_plugin stack extra
run_plugin unstack
'''


def devstack_tree(tmp_path, series):
    """Upstream devstack, unpacked from its snapshot for this test."""
    return helpers.upstream_tree(tmp_path, SNAPSHOTS[series])


class Stack:
    """One run of HARNESS: what it left and recorded."""

    def __init__(self, tmp_path, series='2026.2', etc_files=None, **env):
        self.etc = tmp_path / 'etc'
        self.etc.mkdir()
        for name, text in (etc_files or {}).items():
            (self.etc / name).write_text(text)
        dest = tmp_path / 'dest'
        dest.mkdir()
        bindir = tmp_path / 'bin'
        bindir.mkdir()
        self.calls_file = tmp_path / 'calls'
        fake = bindir / 'virt-capabilities'
        fake.write_text('#!/bin/bash\necho "virt-capabilities $*" >> '
                        '"$CALLS"\n')
        fake.chmod(0o755)
        started = tmp_path / 'started'
        os.mkfifo(started)
        environment = {
            'PATH': '%s:%s' % (bindir, os.environ['PATH']),
            'HOME': str(tmp_path), 'CALLS': str(self.calls_file),
            'REPO': REPO, 'DEVSTACK': str(devstack_tree(tmp_path, series)),
            'ETC': str(self.etc), 'DEST': str(dest),
            'DATA_DIR': str(tmp_path / 'data'), 'STARTED': str(started),
            'HOSTNAME': 'devstack', 'VIRT_DRIVER': 'libvirt',
            'ENABLED_SERVICES': 'n-api,n-sch,n-cond,n-cpu,placement-api,'
                                'q-svc,image-type-reporter'}
        environment.update(env)
        self.proc = subprocess.run(['bash', '-c', HARNESS], env=environment,
                                   capture_output=True, text=True,
                                   timeout=120)
        self.calls = (self.calls_file.read_text().splitlines()
                      if self.calls_file.exists() else [])

    def ok(self):
        assert self.proc.returncode == 0, self.proc.stderr[-3000:]
        return self

    def nova_conf(self):
        """nova.conf as nova-scheduler reads it (oslo.config)."""
        conf = config_blocks.nova_conf()
        conf.register_opt(cfg.StrOpt('region_name'), group='neutron')
        conf(args=[], default_config_files=[str(self.etc / 'nova.conf')],
             project='nova', use_env=False)
        return conf

    def started(self, prefix):
        """{service: command line} of the run_process calls."""
        found = {}
        for call in self.calls:
            words = call.split(' ', 2)
            if words[0] == 'run_process' and words[1].startswith(prefix):
                found[words[1]] = words[2]
        return found

    def virt_capabilities(self, command):
        return [c.split()[2:] for c in self.calls
                if c.startswith('virt-capabilities %s ' % command)]


def config_files(command_line):
    words = command_line.split()
    return [words[i + 1] for i, w in enumerate(words) if w == '--config-file']


def assert_nova_scheduler_loads_the_filters(stack):
    """What nova-scheduler finds when devstack starts it."""
    conf = stack.nova_conf()
    assert conf.filter_scheduler.available_filters == [
        'nova.scheduler.filters.all_filters',
        'image_type_filter.nova.all_filters']
    enabled = conf.filter_scheduler.enabled_filters
    assert enabled[-1] == 'ImageTypeRebuildFilter'
    assert 'ImagePropertiesFilter' in enabled  # devstack's list is kept
    assert conf.scheduler.filter_hosts_by_image_type_support is True


@pytest.mark.parametrize('series', sorted(SNAPSHOTS))
def test_libvirt_one_reporter_reads_nova_cpu_conf(tmp_path, series):
    stack = Stack(tmp_path, series).ok()
    assert_nova_scheduler_loads_the_filters(stack)
    computes = stack.started('n-cpu')
    reporters = stack.started('image-type-reporter')
    assert list(computes) == ['n-cpu']
    assert list(reporters) == ['image-type-reporter']
    cpu_conf = str(stack.etc / 'nova-cpu.conf')
    assert config_files(computes['n-cpu']) == [cpu_conf]
    assert config_files(reporters['image-type-reporter']) == [cpu_conf]
    assert stack.virt_capabilities('report') == [
        ['--config-file', cpu_conf, '--wait', '300']]
    assert 'stop_process image-type-reporter' in stack.calls
    # unstack stops; what the reporter set stays in Placement.
    assert stack.virt_capabilities('remove') == []


@pytest.mark.parametrize('series', sorted(SNAPSHOTS))
def test_fake_driver_one_reporter_per_nova_compute(tmp_path, series):
    """devstack runs n-cpu-1 .. n-cpu-N, each from nova-cpu.conf and its
    own nova-fake.conf-N (host ${HOSTNAME}N): a reporter each, with the
    same files, so each finds its own node's provider."""
    stack = Stack(tmp_path, series, VIRT_DRIVER='fake',
                  NUMBER_FAKE_NOVA_COMPUTE='2').ok()
    assert_nova_scheduler_loads_the_filters(stack)
    computes = stack.started('n-cpu')
    reporters = stack.started('image-type-reporter')
    assert sorted(computes) == ['n-cpu-1', 'n-cpu-2']
    assert sorted(reporters) == ['image-type-reporter-1',
                                 'image-type-reporter-2']
    for i in (1, 2):
        files = config_files(computes['n-cpu-%d' % i])
        assert config_files(reporters['image-type-reporter-%d' % i]) == files
        assert files[-1] == str(stack.etc / ('nova-fake.conf-%d' % i))
        own = configparser.ConfigParser(interpolation=None)
        own.read(stack.etc / ('nova-fake.conf-%d' % i))
        assert own['DEFAULT']['host'] == 'devstack%d' % i
        # devstack makes the node's state_path as root: the reporter's
        # files are in $NOVA_STATE_PATH, its status file its own.
        state = own['DEFAULT']['state_path'].rsplit('/', 1)[0]
        assert own['virt_capabilities']['state_file'] == (
            state + '/virt_capabilities.json')
        assert own['virt_capabilities']['status_file'] == (
            state + '/virt_capabilities_status-image-type-reporter-%d.json'
            % i)
    assert [config_files(' '.join(args)) for args in
            stack.virt_capabilities('report')] == [
        config_files(computes['n-cpu-1']), config_files(computes['n-cpu-2'])]
    assert [c for c in stack.calls if c.startswith('stop_process')] == [
        'stop_process image-type-reporter-1',
        'stop_process image-type-reporter-2']


def test_an_upgraded_side_keeps_the_reporter_s_records_file(tmp_path):
    """grenade's target side stacks with another DEST: a fake node's
    reporter keeps the state and status files its config already names,
    so it reads the records it wrote before the upgrade."""
    before = ('[virt_capabilities]\nstate_file = /old/data/nova/'
              'virt_capabilities.json\nstatus_file = /old/status.json\n')
    stack = Stack(tmp_path, VIRT_DRIVER='fake', NUMBER_FAKE_NOVA_COMPUTE='1',
                  etc_files={'nova-fake.conf-1': before}).ok()
    own = configparser.ConfigParser(interpolation=None)
    own.read(stack.etc / 'nova-fake.conf-1')
    assert own['virt_capabilities']['state_file'] == (
        '/old/data/nova/virt_capabilities.json')
    assert own['virt_capabilities']['status_file'] == '/old/status.json'


def test_ironic_without_nodes_is_refused_naming_why(tmp_path):
    stack = Stack(tmp_path, VIRT_DRIVER='ironic')
    assert stack.proc.returncode != 0
    assert ('VIRT_DRIVER=ironic: the image-type reporter cannot find an '
            'Ironic node from nova.conf; name the nodes (uuid or name) in '
            'IMAGE_TYPE_REPORTER_PROVIDERS') in stack.proc.stdout + \
        stack.proc.stderr
    assert stack.calls == []  # refused at pre-install, before anything


def test_ironic_reporter_keeps_the_named_nodes(tmp_path):
    stack = Stack(tmp_path, VIRT_DRIVER='ironic',
                  IMAGE_TYPE_REPORTER_PROVIDERS='node-0 node-1').ok()
    assert_nova_scheduler_loads_the_filters(stack)
    computes = stack.started('n-cpu')
    reporters = stack.started('image-type-reporter')
    assert list(computes) == ['n-cpu']
    cpu_conf = str(stack.etc / 'nova-cpu.conf')
    assert config_files(computes['n-cpu']) == [cpu_conf]
    nodes = ['--provider', 'node-0', '--provider', 'node-1']
    assert reporters['image-type-reporter'].split()[2:] == [
        '--config-file', cpu_conf] + nodes + ['--interval', '60']
    assert stack.virt_capabilities('report') == [
        ['--config-file', cpu_conf] + nodes + ['--wait', '300']]


def test_ironic_refuses_the_reporter_owning_image_types(tmp_path):
    stack = Stack(tmp_path, VIRT_DRIVER='ironic',
                  IMAGE_TYPE_REPORTER_PROVIDERS='node-0',
                  IMAGE_TYPE_TRAITS_OWNER='reporter')
    assert stack.proc.returncode != 0
    assert ('IMAGE_TYPE_TRAITS_OWNER=reporter is refused there'
            in stack.proc.stdout + stack.proc.stderr)


def test_the_plugins_lines_survive_configure_neutron_nova(tmp_path):
    """stack.sh's parallel mode: configure_neutron_nova, in the background
    from before the post-config phase until stack.sh joins it after, wrote
    a nova.conf read before the plugin's lines; the plugin joins it first,
    and both sides' lines are in the nova.conf nova-scheduler starts
    with."""
    stack = Stack(tmp_path).ok()
    assert_nova_scheduler_loads_the_filters(stack)
    assert stack.nova_conf().neutron.region_name == 'RegionOne'
    # stack.sh's own wait found the job joined already.
    assert ('Not waiting for async task configure_neutron_nova that we '
            'never started or has already been waited for'
            in stack.proc.stdout)
