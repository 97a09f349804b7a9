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

"""kolla-ansible's own tools and files say the kolla recipe holds.

kolla-ansible 22.2.0 (2026.1, the newest on the package index), installed
with kolla 22.2.0 in a virtualenv of their own (``tests/deploy_tools.py``):

* nova-scheduler's override from ``doc/source/install/kolla-ansible.rst``,
  merged over the cloud's own ``nova.conf`` override by kolla-ansible's
  ``merge_configs`` action plugin, run by ansible-core, with the sources in
  the order kolla-ansible's nova role gives them; the result is parsed as
  Nova parses it (``tests/repository/test_config_blocks.py``);
* the reporter container's recipe against what kolla-ansible's roles say
  about nova-compute (its config directory, ``compute_id``, the log
  volume, the paths of its ``nova.conf``), what kolla-ansible's systemd
  code names nova_compute's unit, what kolla's own start script accepts
  as a ``config.json``, and what systemd makes of the unit;
* every kolla-ansible variable the page names is one of its roles'.
"""

import json
import os
import re
import shutil
import subprocess
import textwrap

import pytest
import yaml

from tests import deploy_tools
from tests.repository import test_config_blocks as blocks
from tests.repository import test_kolla_reporter as reporter

pytestmark = pytest.mark.slow

PAGE = 'doc/source/install/kolla-ansible.rst'
CLOUD_CONF = '/etc/kolla/config/nova.conf (the cloud\'s, unchanged)'
SCHEDULER_CONF = '/etc/kolla/config/nova/nova-scheduler.conf'
OURS = 'image_type_filter.nova.all_filters'
NOVAS = 'nova.scheduler.filters.all_filters'


@pytest.fixture(scope='module')
def tools(tmp_path_factory):
    """(virtualenv, kolla-ansible's ansible directory)."""
    venv = deploy_tools.install('2026.1',
                                str(tmp_path_factory.mktemp('kolla-ansible')))
    return venv, deploy_tools.share(venv, 'kolla-ansible', 'ansible')


def read_yaml(ansible, *path):
    with open(os.path.join(ansible, *path)) as f:
        return yaml.safe_load(f)


def read_text(ansible, *path):
    with open(os.path.join(ansible, *path)) as f:
        return f.read()


def common_var(ansible, name):
    """A variable of kolla-ansible's group_vars/all/common.yml (only plain
    values are asked for)."""
    value = read_yaml(ansible, 'group_vars', 'all', 'common.yml')[name]
    assert '{' not in value, value
    return value


def page_blocks():
    return {caption: body for page, caption, body
            in blocks.captioned_doc_blocks() if page == PAGE}


def scheduler_sources(ansible):
    """The files nova role's merge_configs task merges into a service's
    nova.conf, in its order, as written there."""
    tasks = read_yaml(ansible, 'roles', 'nova', 'tasks', 'config.yml')
    [task] = [t for t in tasks if 'merge_configs' in t
              and t['merge_configs']['dest'].endswith('/nova.conf')]
    return task['merge_configs']['sources']


def merge(tools, tmp_path, files):
    """nova-scheduler's nova.conf as kolla-ansible writes it, from
    ``files`` ({path under /etc/kolla/config: text}); kolla-ansible's own
    template stands as a nova.conf that sets no filter (it sets them only
    with Blazar or the fake driver on)."""
    venv, ansible = tools
    custom = tmp_path / 'config'
    for name, text in files.items():
        (custom / name).parent.mkdir(parents=True, exist_ok=True)
        (custom / name).write_text(text)
    template = tmp_path / 'rendered-template.conf'
    template.write_text('[DEFAULT]\nstate_path = /var/lib/nova\n\n'
                        '[filter_scheduler]\n\n[scheduler]\nmax_attempts = '
                        '10\n')
    sources = []
    for source in scheduler_sources(ansible):
        source = source.replace('{{ role_path }}/templates/nova.conf.j2',
                                str(template))
        source = source.replace('{{ node_custom_config }}', str(custom))
        source = source.replace('{{ item.key }}', 'nova-scheduler')
        source = source.replace('{{ inventory_hostname }}', 'controller-1')
        assert '{{' not in source, source
        sources.append(source)
    dest = tmp_path / 'nova-scheduler' / 'nova.conf'
    dest.parent.mkdir()
    home = tmp_path / 'home'
    home.mkdir()
    env = dict(os.environ, HOME=str(home),
               ANSIBLE_ACTION_PLUGINS=os.path.join(ansible, 'action_plugins'),
               ANSIBLE_LOCAL_TEMP=str(home / 'tmp'),
               ANSIBLE_REMOTE_TEMP=str(home / 'tmp'),
               ANSIBLE_LOCALHOST_WARNING='False',
               ANSIBLE_INVENTORY_UNPARSED_WARNING='False')
    args = json.dumps({'sources': sources, 'dest': str(dest),
                       'mode': '0660'})
    proc = subprocess.run(
        [os.path.join(venv, 'bin', 'ansible'), 'localhost', '-c', 'local',
         '-m', 'merge_configs', '-a', args],
        capture_output=True, text=True, timeout=300, env=env,
        cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return dest.read_text()


def test_the_role_merges_the_files_the_page_names(tools):
    _, ansible = tools
    assert scheduler_sources(tools[1])[1:4] == [
        '{{ node_custom_config }}/global.conf',
        '{{ node_custom_config }}/nova.conf',
        '{{ node_custom_config }}/nova/{{ item.key }}.conf']
    common = read_yaml(ansible, 'group_vars', 'all', 'common.yml')
    assert common['node_custom_config'] == '{{ node_config }}/config'
    assert common['node_config'] == \
        "{{ CONFIG_DIR | default('/etc/kolla') }}"


def test_the_documented_override_keeps_the_clouds_filters(tools, tmp_path):
    page = page_blocks()
    merged = merge(tools, tmp_path, {
        'nova.conf': page[CLOUD_CONF],
        'nova/nova-scheduler.conf': page[SCHEDULER_CONF]})
    values = blocks.parse_as_nova(tmp_path, merged)
    clouds = blocks.parse_as_nova(tmp_path, page[CLOUD_CONF])[
        ('filter_scheduler', 'enabled_filters')]
    assert {'NUMATopologyFilter', 'PciPassthroughFilter'} <= set(clouds)
    assert values[('filter_scheduler', 'available_filters')] == [NOVAS, OURS]
    assert values[('filter_scheduler', 'enabled_filters')] == \
        clouds + ['ImageTypeRebuildFilter']
    assert values[('scheduler', 'filter_hosts_by_image_type_support')] is \
        True


def test_nova_defaults_as_the_override_drop_the_clouds_filters(tools,
                                                               tmp_path):
    """Why the page says to restate the cloud's list: the install guide's
    block (Nova's defaults and ours) as the override."""
    page = page_blocks()
    install_guide = [b for p, b in blocks.doc_blocks()
                     if p.endswith('install/scheduler.rst')][0]
    merged = merge(tools, tmp_path, {
        'nova.conf': page[CLOUD_CONF],
        'nova/nova-scheduler.conf': install_guide})
    enabled = blocks.parse_as_nova(tmp_path, merged)[
        ('filter_scheduler', 'enabled_filters')]
    assert 'ImageTypeRebuildFilter' in enabled
    assert 'NUMATopologyFilter' not in enabled
    assert 'PciPassthroughFilter' not in enabled


def test_available_filters_over_two_files_keeps_only_the_later(tools,
                                                                tmp_path):
    """Why both lines stand in one file."""
    merged = merge(tools, tmp_path, {
        'nova.conf': '[filter_scheduler]\navailable_filters = %s\n' % NOVAS,
        'nova/nova-scheduler.conf':
            '[filter_scheduler]\navailable_filters = %s\n' % OURS})
    assert blocks.parse_as_nova(tmp_path, merged)[
        ('filter_scheduler', 'available_filters')] == [OURS]


# -- the reporter's container ---------------------------------------------

def test_the_reporters_paths_are_those_kolla_ansible_writes(tools):
    """nova-compute's nova.conf (nova-cell role) has the log_dir and
    state_path the reporter test runs with, in plain lines."""
    _, ansible = tools
    template = read_text(ansible, 'roles', 'nova-cell', 'templates',
                         'nova.conf.j2')
    for key, value in reporter.KOLLA_NOVA_CONF.items():
        assert re.findall(r'^%s = (.*)$' % key, template, re.M) == [value]


def test_compute_id_is_where_the_recipe_copies_it_from(tools):
    """kolla-ansible writes the node's uuid into nova-compute's config
    directory on the host, and nova-compute's container copies it into its
    state_path at each start; the recipe mounts that directory and copies
    the same file."""
    _, ansible = tools
    node_config = common_var(ansible, 'node_config_directory')
    container_config = common_var(ansible, 'container_config_directory')
    tasks = read_yaml(ansible, 'roles', 'nova-cell', 'tasks', 'config.yml')
    writes = [t['ansible.builtin.copy']['dest']
              for block in tasks for t in block.get('block', [])
              if 'ansible.builtin.copy' in t]
    assert writes and set(writes) == {
        '{{ node_config_directory }}/nova-compute/compute_id'}
    assert node_config + '/nova-compute/' == reporter.NOVA_COMPUTE_CONFIG_DIR
    nova_compute_json = read_text(ansible, 'roles', 'nova-cell',
                                  'templates', 'nova-compute.json.j2')
    assert re.search(
        r'"source": "\{\{ container_config_directory \}\}/compute_id",\s*'
        r'"dest": "%s/compute_id"' % reporter.KOLLA_NOVA_CONF['state_path'],
        nova_compute_json)
    # The recipe: that directory, read-only, and the file from it.
    mounted = {target: source for source, target, options
               in reporter.unit_volumes()}
    [(target, source)] = [(t, s) for t, s in mounted.items()
                          if s == reporter.NOVA_COMPUTE_CONFIG_DIR]
    assert target != container_config + '/'  # the reporter's own is there
    copies = {e['source']: e['dest']
              for e in reporter.kolla_config()['config_files']}
    assert copies[target + 'compute_id'] == '/etc/nova/compute_id'
    assert copies[target + 'nova.conf'] == '/etc/nova/nova.conf'


def test_the_log_volume_is_nova_computes_own(tools):
    """The same kolla_logs mount nova_compute has; kolla's fluentd and log
    rotation read every *.log of /var/log/kolla/nova."""
    _, ansible = tools
    volumes = read_yaml(ansible, 'roles', 'nova-cell', 'defaults',
                        'main.yml')['nova_compute_default_volumes']
    ours = ['%s:%s' % (s, t) for s, t, o in reporter.unit_volumes()
            if not s.startswith('/')]
    assert 'kolla_logs:/var/log/kolla/' in ours
    assert 'kolla_logs:/var/log/kolla/' in volumes
    assert '{{ node_config_directory }}/nova-compute/:' \
        '{{ container_config_directory }}/:ro' in volumes
    fluentd = read_text(ansible, 'roles', 'fluentd', 'templates', 'conf',
                        'input', '00-global.conf.j2')
    assert '/var/log/kolla/{{ service }}/*.log' in fluentd
    assert 'nova' in [s['name'] for s in read_yaml(
        ansible, 'roles', 'fluentd', 'defaults', 'main.yml')[
        'fluentd_input_openstack_services']]
    rotation = read_text(ansible, 'roles', 'cron', 'templates',
                         'cron-logrotate-default.conf.j2')
    assert '"/var/log/kolla/{{ service }}/*.log"' in rotation
    [task] = [t for t in read_yaml(ansible, 'roles', 'cron', 'tasks',
                                   'config.yml')
              if 'cron_logrotate_services' in t.get('vars', {})]
    assert 'nova' in [s['name'] for s in task['vars'][
        'cron_logrotate_services']]


def test_kollas_start_script_accepts_the_config_json(tools):
    """kolla 22.2.0's own set_configs.py validates it, and the one-off
    removal's."""
    venv, _ = tools
    script = os.path.join(deploy_tools.kolla_images(venv), 'base',
                          'set_configs.py')
    check = ('import importlib.util, json, sys\n'
             'spec = importlib.util.spec_from_file_location(\n'
             '    "s", sys.argv[1])\n'
             'm = importlib.util.module_from_spec(spec)\n'
             'spec.loader.exec_module(m)\n'
             'config = json.load(open(sys.argv[2]))\n'
             'm.validate_config(config)\n'
             'bad = dict(config, config_files=[{"source": "/x", '
             '"dest": "/y"}])\n'
             'try:\n    m.validate_config(bad)\nexcept m.InvalidConfig:\n'
             '    print("valid, and an invalid one refused")\n')
    for path in (reporter.CONFIG_JSON, reporter.REMOVE_JSON):
        proc = subprocess.run([os.path.join(venv, 'bin', 'python'), '-c',
                               check, script, path],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == 'valid, and an invalid one refused\n'


def kolla_unit(tools, name):
    """(unit name, unit text) kolla-ansible's systemd code makes for a
    container; only its D-Bus connection is stood in for, as there is no
    systemd to talk to."""
    venv, ansible = tools
    code = (
        'import importlib.util, sys, types\n'
        'bus = types.SimpleNamespace(get_object=lambda *a: None)\n'
        'sys.modules["dbus"] = types.SimpleNamespace(\n'
        '    SystemBus=lambda: bus, Interface=lambda *a, **k: None)\n'
        'spec = importlib.util.spec_from_file_location("w", sys.argv[1])\n'
        'm = importlib.util.module_from_spec(spec)\n'
        'spec.loader.exec_module(m)\n'
        'w = m.SystemdWorker({"name": sys.argv[2], "container_engine": '
        '"docker", "restart_policy": "unless-stopped", '
        '"graceful_timeout": 60})\n'
        'print(w.container_dict["service_name"])\n'
        'print(w.generate_unit_file())\n')
    proc = subprocess.run(
        [os.path.join(venv, 'bin', 'python'), '-c', code,
         os.path.join(ansible, 'module_utils', 'kolla_systemd_worker.py'),
         name], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    unit, text = proc.stdout.split('\n', 1)
    return unit, text


def test_the_unit_follows_nova_computes_own(tools):
    unit, text = kolla_unit(tools, 'nova_compute')
    ours = reporter.unit_text()
    for key in ('After', 'PartOf', 'WantedBy'):
        assert re.findall(r'^%s=(.*)$' % key, ours, re.M) == [unit], key
    # The engine kolla-ansible starts nova_compute with.
    [engine] = re.findall(r'^ExecStart=(\S+) start -a nova_compute$', text,
                          re.M)
    assert re.findall(r'exec (\S+) run ', ours) == [engine]
    assert re.findall(r'ExecStop=(\S+) stop ', ours) == [engine]
    # Our own name follows kolla-ansible's pattern for a container's unit.
    assert os.path.basename(reporter.UNIT) == kolla_unit(
        tools, 'virt_capabilities')[0]


def test_systemd_reads_the_unit_without_a_complaint(tmp_path):
    """systemd-analyze verify, in a root of the test's own holding the
    system's unit files and stand-ins for the programs the unit runs."""
    analyze = shutil.which('systemd-analyze')
    assert analyze, 'systemd-analyze is needed (Debian: systemd)'
    root = tmp_path / 'root'
    shutil.copytree('/usr/lib/systemd/system',
                    root / 'usr' / 'lib' / 'systemd' / 'system',
                    symlinks=True)
    for program in re.findall(r'^Exec\w+=-?(\S+)', reporter.unit_text(),
                              re.M):
        stand_in = root / program.lstrip('/')
        stand_in.parent.mkdir(parents=True, exist_ok=True)
        stand_in.write_text('#!/bin/sh\n')
        stand_in.chmod(0o755)
    units = root / 'etc' / 'systemd' / 'system'
    units.mkdir(parents=True)
    shutil.copy(reporter.UNIT, units)
    proc = subprocess.run(
        [analyze, 'verify', '--root', str(root),
         '/etc/systemd/system/' + os.path.basename(reporter.UNIT)],
        capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, '', '')


def test_every_variable_the_page_names_is_kolla_ansibles(tools):
    _, ansible = tools
    with open(os.path.join(blocks.REPO, PAGE)) as f:
        page = f.read()
    # The page's kolla-ansible variables: image tags and references (its
    # other nova_* names are kolla's template blocks and container names).
    named = set(re.findall(r'``(nova_\w+_(?:tag|image_full))``', page))
    for block in re.findall(r'code-block:: yaml\n\n((?:   .*\n)+)', page):
        named |= set(yaml.safe_load(textwrap.dedent(block)))
    assert {'nova_scheduler_tag', 'nova_compute_tag',
            'nova_scheduler_image_full', 'nova_compute_image_full'} <= named
    defined = set()
    for role in ('nova', 'nova-cell'):
        defined |= set(read_yaml(ansible, 'roles', role, 'defaults',
                                 'main.yml'))
    assert named <= defined, named - defined


def test_the_image_variables_name_the_images(tools):
    """Each *_tag is the tag of the image its *_image_full names."""
    _, ansible = tools
    for role, image in (('nova', 'nova_scheduler'),
                        ('nova-cell', 'nova_compute')):
        defaults = read_yaml(ansible, 'roles', role, 'defaults', 'main.yml')
        assert defaults['%s_image_full' % image] == \
            '{{ %s_image }}:{{ %s_tag }}' % (image, image)


def test_the_readiness_check_reads_the_schedulers_own_nova_conf(tools):
    """The page runs status in nova_scheduler's container with
    /etc/nova/nova.conf: kolla-ansible's name for the container, and
    where its start script copies nova-scheduler's merged nova.conf."""
    _, ansible = tools
    with open(os.path.join(blocks.REPO, PAGE)) as f:
        page = f.read()
    [command] = re.findall(r'^   # (docker exec \S+ image-type-filter '
                           r'status .*)$', page, re.M)
    argv = command.split()
    defaults = read_yaml(ansible, 'roles', 'nova', 'defaults', 'main.yml')
    assert argv[2] == \
        defaults['nova_services']['nova-scheduler']['container_name']
    config = read_text(ansible, 'roles', 'nova', 'templates',
                       'nova-scheduler.json.j2')
    conf = argv[argv.index('--config-file') + 1]
    assert re.search(r'"source": "\{\{ container_config_directory '
                     r'\}\}/nova.conf",\s*"dest": "%s"' % re.escape(conf),
                     config)
    # Its image has the command (test_kolla.py renders it).
    with open(os.path.join(blocks.REPO, 'contrib', 'kolla',
                           'template-overrides.j2')) as f:
        override = f.read()
    scheduler = override.split('{% block nova_scheduler_footer %}')[1]
    assert '/dependencies-cli.txt' in scheduler.split('{% endblock %}')[0]


UPGRADE_PAGE = 'doc/source/install/upgrade.rst'
ROLLBACK = SCHEDULER_CONF + ' (rollback, %s step)'


def test_the_rollback_steps_merge_as_the_upgrade_page_says(tools,
                                                           tmp_path):
    """The upgrade page's two overrides, over the cloud's nova.conf of
    this page, through kolla-ansible's merge_configs: first Nova's own
    mechanisms beside the filters, then Nova's alone, the cloud's
    filters kept."""
    rollback = {caption: body for page, caption, body
                in blocks.captioned_doc_blocks() if page == UPGRADE_PAGE}
    cloud = page_blocks()[CLOUD_CONF]
    clouds = blocks.parse_as_nova(tmp_path, cloud)[
        ('filter_scheduler', 'enabled_filters')]
    values = {}
    for step in ('first', 'second'):
        where = tmp_path / step
        where.mkdir()
        merged = merge(tools, where, {
            'nova.conf': cloud,
            'nova/nova-scheduler.conf': rollback[ROLLBACK % step]})
        values[step] = blocks.parse_as_nova(where, merged)
        assert values[step][('scheduler',
                             'query_placement_for_image_type_support')]
        assert 'image_metadata_prefilter = True' in merged
        assert 'enable_isolated_aggregate_filtering = True' in merged
    first, second = values['first'], values['second']
    assert first[('filter_scheduler', 'available_filters')] == [NOVAS, OURS]
    assert first[('filter_scheduler', 'enabled_filters')] == \
        clouds + ['ImageTypeRebuildFilter']
    assert first[('scheduler', 'filter_hosts_by_image_type_support')]
    # Nothing of ours: Nova's default filter path, the cloud's list.
    # No line: Nova's default, its own filters alone.
    assert ('filter_scheduler', 'available_filters') not in second
    assert second[('filter_scheduler', 'enabled_filters')] == clouds
    assert ('scheduler', 'filter_hosts_by_image_type_support') not in \
        second
