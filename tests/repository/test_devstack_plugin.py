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

"""Source devstack/plugin.sh under bash with recording stubs, every phase."""

import configparser
import os
import subprocess
import sys

import pytest

from tests import helpers

REPO = helpers.REPO

STUBS = r'''
set -euo pipefail
record() { echo "$*" >> "$CALLS"; }
define_plugin() { record define_plugin "$@"; }
enable_service() { record enable_service "$@"; ENABLED="$ENABLED $*"; }
setup_develop() { record setup_develop "$@"; }
pip_install() { record pip_install "$@"; }
iniset() { record iniset "$@"; }
iniset_multiline() { record iniset_multiline "$@"; }
iniget() {
    case "$2 $3" in
        "filter_scheduler enabled_filters") echo "${ENABLED_FILTERS:-}" ;;
        "DEFAULT log_dir") echo "${NOVA_LOG_DIR:-}" ;;
        "DEFAULT log_file") echo "${NOVA_LOG_FILE:-}" ;;
        "virt_capabilities state_file") echo "${STATE_FILE:-}" ;;
        "virt_capabilities status_file") echo "${STATUS_FILE:-}" ;;
    esac
}
iniget_multiline() { echo "${AVAILABLE_FILTERS:-}"; }
run_process() { record run_process "$@"; }
stop_process() { record stop_process "$@"; }
echo_summary() { :; }
die() { shift; echo "$*" >&2; exit 1; }
async_pidof() { [[ " ${ASYNC_JOBS:-} " == *" $1 "* ]]; }
async_wait() { record async_wait "$@"; }
set_tempest_venv_constraints() { echo "constraints" > "$1"; }
# devstack's: true when any of the services is enabled.
is_service_enabled() {
    local service
    for service in "$@"; do
        [[ " ${DISABLED:-} " == *" $service "* ]] && continue
        [[ " $ENABLED " == *" $service "* ]] && return 0
    done
    return 1
}
source "$REPO/devstack/settings"
source "$REPO/devstack/plugin.sh" "$MODE" "$PHASE"
# devstack's xtrace setting, as the plugin found it.
[[ $- != *x* ]] || { echo "plugin.sh left xtrace on" >&2; exit 1; }
'''


def run_phase(tmp_path, mode, phase='', **env):
    calls = tmp_path / 'calls'
    bindir = tmp_path / 'bin'
    bindir.mkdir(exist_ok=True)
    fake = bindir / 'virt-capabilities'
    fake.write_text('#!/bin/bash\necho "virt-capabilities $*" >> "$CALLS"\n'
                    'exit "${VIRT_CAPABILITIES_EXIT:-0}"\n')
    fake.chmod(0o755)
    fake = bindir / 'tox'
    fake.write_text('#!/bin/bash\necho "tox $* (in $PWD)" >> "$CALLS"\n')
    fake.chmod(0o755)
    # qemu-img: records the call and makes the file, as the real one does.
    fake = bindir / 'qemu-img'
    fake.write_text('#!/bin/bash\necho "qemu-img $*" >> "$CALLS"\n'
                    'echo "$5 image" > "$5"\n')
    fake.chmod(0o755)
    state = tmp_path / 'state'
    state.mkdir(exist_ok=True)
    tempest_dir = tmp_path / 'tempest'
    tempest_dir.mkdir(exist_ok=True)
    environment = {
        'PATH': '%s:%s' % (bindir, os.environ['PATH']), 'CALLS': str(calls),
        'REPO': REPO, 'MODE': mode, 'PHASE': phase, 'DEST': '/opt/stack',
        'DATA_DIR': str(tmp_path / 'data'), 'TEMPEST_DIR': str(tempest_dir),
        'TEMPEST_CONFIG': str(tempest_dir / 'etc' / 'tempest.conf'),
        'API_WORKERS': '2', 'VIRT_DRIVER': 'libvirt',
        'NOVA_CONF': str(tmp_path / 'nova.conf'), 'NOVA_STATE_PATH':
        str(state), 'ENABLED': 'n-cpu n-sch tempest'}
    environment.update(env)
    proc = subprocess.run(['bash', '-c', STUBS], env=environment,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    run_phase.stdout = proc.stdout
    return calls.read_text().splitlines() if calls.exists() else []


def apply_iniset(calls, path):
    """What devstack's iniset would leave in the file."""
    conf = configparser.ConfigParser(interpolation=None)
    for call in calls:
        words = call.split()
        if words[0] == 'iniset' and words[1] == path:
            section, option = words[2], words[3]
            value = words[4] if len(words) > 4 else ''
            if not conf.has_section(section):
                conf.add_section(section)
            conf.set(section, option, value)
    return conf


def without_settings(calls):
    return [c for c in calls if not c.startswith(('define_plugin',
                                                  'enable_service'))]


def test_settings_define_the_plugin_and_service(tmp_path):
    calls = run_phase(tmp_path, 'stack', 'pre-install')
    assert 'define_plugin image-type-filter' in calls
    assert 'enable_service image-type-reporter' in calls


@pytest.mark.parametrize('enabled, expected', [
    # A compute node: the reporter's command line too (the cli extra).
    ('n-cpu n-sch tempest', ['setup_develop /opt/stack/image-type-filter '
                             'cli']),
    ('n-cpu', ['setup_develop /opt/stack/image-type-filter cli']),
    # nova-scheduler's node alone: the package, lean.
    ('n-sch', ['setup_develop /opt/stack/image-type-filter']),
    # Neither: nothing of the project runs there.
    ('q-svc tempest', [])])
def test_install_sets_up_what_the_node_runs(tmp_path, enabled, expected):
    calls = without_settings(run_phase(tmp_path, 'stack', 'install',
                                       ENABLED=enabled))
    assert calls == expected


NOVA_DEFAULT_ENABLED = ('ComputeFilter,ComputeCapabilitiesFilter,'
                        'ImagePropertiesFilter,ServerGroupAntiAffinityFilter,'
                        'ServerGroupAffinityFilter')


def available_filters(calls, path):
    lines = [c.split() for c in calls if c.startswith('iniset_multiline')]
    assert [w[1:4] for w in lines] == [[path, 'filter_scheduler',
                                        'available_filters']]
    return lines[0][4:]


def test_post_config_loads_the_filters_into_nova_scheduler(tmp_path):
    path = str(tmp_path / 'nova.conf')
    calls = run_phase(tmp_path, 'stack', 'post-config')
    conf = apply_iniset(calls, path)
    assert conf.get('scheduler', 'filter_hosts_by_image_type_support') == \
        'True'
    # Nova's defaults are kept: ours come in addition.
    assert available_filters(calls, path) == [
        'nova.scheduler.filters.all_filters',
        'image_type_filter.nova.all_filters']
    assert conf.get('filter_scheduler', 'enabled_filters') == \
        NOVA_DEFAULT_ENABLED + ',ImageTypeRebuildFilter'


def test_post_config_joins_configure_neutron_nova_before_writing(tmp_path):
    """stack.sh runs configure_neutron_nova in the background through the
    post-config phase (it edits nova.conf too): joined before the first
    read of nova.conf, and only when it is pending."""
    calls = without_settings(run_phase(
        tmp_path, 'stack', 'post-config',
        ASYNC_JOBS='create_flavors configure_neutron_nova'))
    assert calls[0] == 'async_wait configure_neutron_nova'
    assert len(calls) == 4
    alone = tmp_path / 'alone'
    alone.mkdir()
    assert 'async_wait' not in ' '.join(without_settings(
        run_phase(alone, 'stack', 'post-config')))


def test_post_config_keeps_what_nova_conf_has_and_adds_once(tmp_path):
    path = str(tmp_path / 'nova.conf')
    calls = run_phase(
        tmp_path, 'stack', 'post-config',
        AVAILABLE_FILTERS='nova.scheduler.filters.all_filters my.Filter',
        ENABLED_FILTERS='ComputeFilter,NUMATopologyFilter')
    assert available_filters(calls, path) == [
        'nova.scheduler.filters.all_filters', 'my.Filter',
        'image_type_filter.nova.all_filters']
    assert apply_iniset(calls, path).get(
        'filter_scheduler', 'enabled_filters') == \
        'ComputeFilter,NUMATopologyFilter,ImageTypeRebuildFilter'
    rerun = tmp_path / 'rerun'
    rerun.mkdir()
    path = str(rerun / 'nova.conf')
    again = run_phase(
        rerun, 'stack', 'post-config',
        AVAILABLE_FILTERS='a.b image_type_filter.nova.all_filters',
        ENABLED_FILTERS='ComputeFilter,ImageTypeRebuildFilter')
    assert available_filters(again, path) == [
        'a.b', 'image_type_filter.nova.all_filters']
    assert apply_iniset(again, path).get(
        'filter_scheduler', 'enabled_filters') == \
        'ComputeFilter,ImageTypeRebuildFilter'


def test_post_config_respects_disabled(tmp_path):
    calls = without_settings(run_phase(tmp_path, 'stack', 'post-config',
                                       IMAGE_TYPE_FILTER_ENABLED='False'))
    assert calls == []


def test_extra_reports_once_then_starts_the_service(tmp_path):
    cpu_conf = tmp_path / 'nova-cpu.conf'
    cpu_conf.write_text('[DEFAULT]\n')
    calls = without_settings(run_phase(tmp_path, 'stack', 'extra',
                                       NOVA_CPU_CONF=str(cpu_conf)))
    # The production setting: nova-compute owns the image-type traits.
    assert calls[0] == ('iniset %s virt_capabilities image_type_traits_owner '
                        'nova-compute' % cpu_conf)
    assert calls[1] == ('virt-capabilities report --config-file %s --wait '
                        '300' % cpu_conf)
    assert calls[2].startswith('run_process image-type-reporter ')
    assert calls[2].endswith('report --config-file %s --interval 60'
                             % cpu_conf)


def test_extra_with_interval_zero_reports_once_only(tmp_path):
    calls = without_settings(run_phase(
        tmp_path, 'stack', 'extra', IMAGE_TYPE_REPORTER_INTERVAL='0'))
    assert len(calls) == 2 and calls[1].startswith('virt-capabilities report')


def test_extra_on_a_node_without_compute_does_nothing(tmp_path):
    assert without_settings(run_phase(tmp_path, 'stack', 'extra',
                                      ENABLED='n-sch')) == []


def test_post_config_on_a_node_without_the_scheduler_does_nothing(
        tmp_path):
    """A subnode (n-cpu only) leaves nova-scheduler's settings alone."""
    assert without_settings(run_phase(tmp_path, 'stack', 'post-config',
                                      ENABLED='n-cpu')) == []


def test_a_reporter_disabled_in_local_conf_is_not_started(tmp_path):
    calls = run_phase(tmp_path, 'stack', 'extra', ENABLED='n-cpu',
                      DISABLED='image-type-reporter')
    assert not [c for c in calls if c.startswith(('virt-capabilities',
                                                  'run_process'))]


def test_phases_with_nothing_to_do(tmp_path):
    assert without_settings(run_phase(tmp_path, 'stack', 'pre-install')) == []


def plugin_opts():
    """The tempest plugin's own options (contrib/tempest, its own
    distribution; its config module needs only oslo.config)."""
    sys.path.insert(0, os.path.join(REPO, 'contrib', 'tempest'))
    try:
        from image_type_tempest_plugin import config
    finally:
        sys.path.pop(0)
    return config


def test_test_config_installs_the_plugin_and_configures_it(tmp_path):
    calls = without_settings(run_phase(tmp_path, 'stack', 'test-config'))
    tempest_dir = tmp_path / 'tempest'
    # Into tempest's venv against tempest's upper-constraints, as
    # devstack's install_tempest_plugins does.
    words = calls[0].split()
    assert words[:6] == ['tox', '-evenv-tempest', '--', 'pip', 'install',
                         '-c']
    assert words[7:] == ['-e', '/opt/stack/image-type-filter/contrib/tempest',
                         '(in', '%s)' % tempest_dir]
    images = tmp_path / 'data' / 'image-type-filter'
    made = [c.split()[4:] for c in calls if c.startswith('qemu-img')]
    assert made == [['raw', str(images / 'empty.raw'), '64M'],
                    ['qcow2', str(images / 'empty.qcow2'), '64M'],
                    ['vmdk', str(images / 'empty.vmdk'), '64M']]
    # What tempest reads, parsed by oslo.config as tempest parses it.
    path = tempest_dir / 'etc' / 'tempest.conf'
    ini = apply_iniset(calls, str(path))
    path.parent.mkdir()
    with open(path, 'w') as f:
        ini.write(f)
    from oslo_config import cfg
    config = plugin_opts()
    conf = cfg.ConfigOpts()
    conf.register_group(config.group)
    conf.register_opts(config.opts, group=config.group)
    conf([], default_config_files=[str(path)])
    opts = conf.image_type_filter
    assert opts.image_files == {
        f: str(images / ('empty.' + f)) for f in ('raw', 'qcow2', 'vmdk')}
    for disk_format, image in opts.image_files.items():
        assert os.path.isfile(image), disk_format
    # A one-node devstack has no reserved host and its scheduler logs to
    # the journal: those checks skip, saying so.
    assert opts.reserved_trait == ''
    assert opts.scheduler_log is None
    assert opts.image_metadata_family is None
    assert opts.scheduler_workers == 2
    # Every option the phase sets is one the plugin has.
    known = {opt.dest for opt in config.opts}
    assert set(ini['image_type_filter']) <= known


def test_test_config_sets_the_family_and_log_when_given(tmp_path):
    calls = run_phase(tmp_path, 'stack', 'test-config',
                      IMAGE_TYPE_TEMPEST_FAMILY='architecture',
                      IMAGE_TYPE_TEMPEST_SCHEDULER_LOG='/var/log/n-sch.log',
                      IMAGE_TYPE_TEMPEST_RESERVED_TRAIT='CUSTOM_TROVE')
    ini = apply_iniset(calls, str(tmp_path / 'tempest' / 'etc' /
                                  'tempest.conf'))['image_type_filter']
    assert ini['image_metadata_family'] == 'architecture'
    assert ini['scheduler_log'] == '/var/log/n-sch.log'
    assert ini['reserved_trait'] == 'CUSTOM_TROVE'


@pytest.mark.parametrize('log_file, expected', [
    ('', '/opt/stack/data/nova-scheduler.log'),
    # log_file wins over log_dir's file name: the plugin cannot know it.
    ('nova.log', None)])
def test_test_config_reads_the_schedulers_log_from_nova_conf_log_dir(
        tmp_path, log_file, expected):
    """With nova.conf's [DEFAULT] log_dir (the devstack job's), oslo.log
    writes nova-scheduler's lines to log_dir/nova-scheduler.log."""
    calls = run_phase(tmp_path, 'stack', 'test-config',
                      NOVA_LOG_DIR='/opt/stack/data', NOVA_LOG_FILE=log_file)
    ini = apply_iniset(calls, str(tmp_path / 'tempest' / 'etc' /
                                  'tempest.conf'))['image_type_filter']
    assert ini.get('scheduler_log') == expected


@pytest.mark.parametrize('env', [{'ENABLED': 'n-cpu n-sch'},
                                 {'IMAGE_TYPE_FILTER_ENABLED': 'False'}])
def test_test_config_without_tempest_or_filter_does_nothing(tmp_path, env):
    assert without_settings(run_phase(tmp_path, 'stack', 'test-config',
                                      **env)) == []


def test_unstack_only_stops_the_reporters(tmp_path):
    """unstack stops services; Placement keeps what the reporters set."""
    assert without_settings(run_phase(tmp_path, 'unstack')) == [
        'stop_process image-type-reporter']


def test_unstack_on_a_node_without_compute_does_nothing(tmp_path):
    assert without_settings(run_phase(tmp_path, 'unstack',
                                      ENABLED='n-sch')) == []


def test_clean_removes_the_reporters_records_and_the_test_images(tmp_path):
    """clean removes what the plugin wrote on the node: each reporter's
    records and last sync (named in its nova-compute's config) and the
    tempest images."""
    state = tmp_path / 'state' / 'virt_capabilities.json'
    status = tmp_path / 'state' / 'status.json'
    state.parent.mkdir()
    state.write_text('{}')
    status.write_text('{}')
    images = tmp_path / 'data' / 'image-type-filter'
    images.mkdir(parents=True)
    (images / 'empty.raw').write_text('')
    assert without_settings(run_phase(
        tmp_path, 'clean', STATE_FILE=str(state),
        STATUS_FILE=str(status))) == []
    assert not state.exists()
    assert not status.exists()
    assert not images.exists()


def test_bashate_passes():
    bashate = os.path.join(os.path.dirname(sys.executable), 'bashate')
    proc = subprocess.run([bashate, '-i', 'E006', 'devstack/plugin.sh',
                           'devstack/settings'], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
