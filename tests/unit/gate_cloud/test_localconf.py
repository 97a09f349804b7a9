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

"""local.conf rendered from the Zuul job, with devstack's own writer.

devstack comes from the unmodified snapshot in ``../shared/upstream/``;
tempest's ``devstack-tempest`` job (in tempest's sdist, not readable
offline) is written here with what the rendering needs of it: its parent,
``tempest: true`` and its compute-node count.
"""

import configparser
import os
import re
import shutil
import subprocess

import pytest

from gate_cloud import GateError
from gate_cloud import localconf
from gate_cloud import sources

TEMPEST_JOB = """- job:
    name: devstack-tempest
    parent: devstack
    vars:
      devstack_services:
        tempest: true
      devstack_local_conf:
        test-config:
          $TEMPEST_CONFIG:
            compute:
              min_compute_nodes: "{{ groups['compute']
                | default(['controller']) | length }}"
"""


@pytest.fixture(scope='module')
def trees(tmp_path_factory):
    try:
        archive = sources.snapshot(
            sources.SERIES['2026.2']['snapshots']['devstack'])
    except GateError as exc:
        if os.environ.get('CI'):
            raise
        pytest.skip('no devstack snapshot here: %s' % exc)
    scratch = tmp_path_factory.mktemp('trees')
    devstack = sources.unpack(archive, scratch / 'devstack')
    tempest = scratch / 'tempest'
    (tempest / 'zuul.d').mkdir(parents=True)
    (tempest / 'zuul.d' / 'base.yaml').write_text(TEMPEST_JOB)
    return devstack, tempest


def render_all(trees, tmp_path):
    """Every node's local.conf; the nodes and their variables."""
    return localconf.render_nodes(trees, '10.254.253.0/24',
                                  'file:///opt/img.raw', '/opt/git',
                                  tmp_path)


def rendered(trees, tmp_path, node='controller'):
    variables = render_all(trees, tmp_path)['variables'][node]
    return variables, (tmp_path / ('local.conf.' + node)).read_text()


def test_the_job_reaches_local_conf_through_devstack_writer(trees,
                                                             tmp_path):
    variables, text = rendered(trees, tmp_path)
    lines = text.splitlines()
    # devstack-base's "base: false": every service named, none implied.
    assert lines[1] == 'disable_all_services'
    # devstack's own job variables, this project's job, this machine.
    assert 'DATABASE_PASSWORD="secretdatabase"' in lines
    assert 'enable_service n-sch' in lines
    assert 'VIRT_DRIVER="fake"' in lines
    assert 'disable_service c-vol' in lines
    assert 'enable_service tempest' in lines
    assert 'HOST_IP="10.254.253.2"' in lines
    assert 'GIT_BASE="file:///opt/git"' in lines
    assert re.search(r'^enable_plugin image-type-filter \S+$', text, re.M)
    # The job's nova.conf lines, in devstack's meta-section form.
    section = text.split('[[post-config|$NOVA_CONF]]', 1)[1]
    assert 'filter_hosts_by_image_type_support = True' in section
    assert variables['tox_envlist'] == 'all'


def test_the_subnode_stacks_against_the_controller_with_its_own_address(
        trees, tmp_path):
    """The nodeset's subnode gets devstack's subnode group variables
    (Nodepool's addresses answered: the controller's for its services,
    its own for HOST_IP), only nova-compute's services, and the job's
    plugin and nova.conf lines; the controller counts both compute
    nodes for tempest."""
    nodes = render_all(trees, tmp_path)['nodes']
    assert [tuple(n[:2]) for n in nodes] == [
        ('controller', '10.254.253.2'), ('compute1', '10.254.253.3')]
    assert 'subnode' in nodes[1][2]
    _, text = rendered(trees, tmp_path, 'compute1')
    lines = text.splitlines()
    for name in ('SERVICE_HOST', 'DATABASE_HOST', 'RABBIT_HOST', 'Q_HOST'):
        assert '%s="10.254.253.2"' % name in lines
    assert 'HOST_IP="10.254.253.3"' in lines
    assert 'GLANCE_HOSTPORT="10.254.253.2:9292"' in lines
    enabled = {line.split()[1] for line in lines
               if line.startswith('enable_service ')}
    assert {'n-cpu', 'placement-client', 'ovn-controller'} <= enabled
    assert not enabled & {'n-sch', 'n-api', 'placement-api', 'mysql',
                          'tempest', 'key'}
    assert 'VIRT_DRIVER="fake"' in lines
    assert re.search(r'^enable_plugin image-type-filter \S+$', text, re.M)
    assert '[[post-config|$NOVA_CPU_CONF]]' in text
    _, controller = rendered(trees, tmp_path)
    tempest = controller.split('[[test-config|$TEMPEST_CONFIG]]', 1)[1]
    assert 'min_compute_nodes = 2' in tempest.splitlines()


def test_a_jinja_value_left_unanswered_is_refused(trees, tmp_path):
    job = trees[1] / 'zuul.d' / 'unanswered.yaml'
    job.write_text('- job:\n    name: unanswered\n    parent: '
                   'devstack-tempest\n    vars:\n      devstack_localrc:\n'
                   '        X: "{{ nodepool.cloud }}"\n')
    try:
        with pytest.raises(GateError, match='devstack_localrc.X'):
            localconf.render_nodes(trees, '10.254.253.0/24', 'file:///i',
                                   '/opt/git', tmp_path, job='unanswered')
    finally:
        job.unlink()


def test_a_broken_chain_is_refused(trees, tmp_path):
    empty = tmp_path / 'no-tempest'
    (empty / 'zuul.d').mkdir(parents=True)
    with pytest.raises(GateError, match='no job devstack-tempest'):
        localconf.job_vars(trees[0], empty)


def test_merge_is_zuuls():
    parent = {'a': {'x': 1, 'y': 2}, 'b': [1], 'c': 'p'}
    child = {'a': {'y': 3}, 'b': [2], 'd': True}
    assert localconf.merge(parent, child) == {
        'a': {'x': 1, 'y': 3}, 'b': [2], 'c': 'p', 'd': True}
    assert parent['a'] == {'x': 1, 'y': 2}


@pytest.fixture(scope='module')
def grenade_tree(tmp_path_factory):
    try:
        archive = sources.snapshot('grenade-')
    except GateError as exc:
        if os.environ.get('CI'):
            raise
        pytest.skip('no grenade snapshot here: %s' % exc)
    return sources.unpack(archive, tmp_path_factory.mktemp('grenade'))


def rendered_grenade(trees, grenade_tree, tmp_path):
    for side in ('old', 'new'):
        (tmp_path / 'opt/stack' / side / 'devstack').mkdir(parents=True)
    (tmp_path / 'opt/stack/new/grenade').mkdir()
    variables = localconf.render_grenade(
        (trees[0], trees[1], grenade_tree), '10.254.253.2',
        'file:///opt/img.raw', '/opt/git', root=tmp_path)
    return variables, {
        side: (tmp_path / 'opt/stack' / side / 'devstack' /
               'local.conf').read_text().splitlines()
        for side in ('old', 'new')}


def test_grenade_sides_get_the_project_plugin_and_their_own_dest(
        trees, grenade_tree, tmp_path):
    """grenade's pre-run: each side's localrc is grenade_devstack_localrc's
    shared values and the side's own, services and plugins shared."""
    variables, sides = rendered_grenade(trees, grenade_tree, tmp_path)
    for side, lines in sides.items():
        assert 'DEST="/opt/stack/%s"' % side in lines
        assert ('TEMPEST_VENV_UPPER_CONSTRAINTS="/opt/stack/%s/requirements/'
                'upper-constraints.txt"' % side) in lines
        assert 'VIRT_DRIVER="fake"' in lines
        assert 'IMAGE_TYPE_FILTER_ENABLED="True"' in lines
        assert ('enable_plugin image-type-filter '
                'https://opendev.org/x/image-type-filter') in lines
        assert 'disable_service c-vol' in lines
        assert 'filter_hosts_by_image_type_support = True' in lines
        # No Jinja left from grenade's job.
        assert not [line for line in lines if '{{' in line]
    assert variables['grenade_from_branch'] == 'stable/2026.1'


def test_grenade_localrc_holds_the_template_s_lines(trees, grenade_tree,
                                                    tmp_path):
    """Every setting roles/write-grenade-conf's template writes is in
    ours, with the job's branches and this project's grenade plugin."""
    rendered_grenade(trees, grenade_tree, tmp_path)
    grenade = tmp_path / 'opt/stack/new/grenade'
    ours = (grenade / 'localrc').read_text()
    template = (grenade_tree / 'roles/write-grenade-conf/templates/'
                'localrc.j2').read_text()
    names = re.findall(r'^(?:export )?([A-Z_]+)=', template, re.M)
    assert len(names) > 10
    for name in names:
        assert re.search(r'^(?:export )?%s=' % name, ours, re.M), name
    assert 'BASE_DEVSTACK_BRANCH=stable/2026.1' in ours.splitlines()
    assert 'VERIFY_RESOURCES=False' in ours.splitlines()
    assert ('enable_grenade_plugin image-type-filter '
            'https://opendev.org/x/image-type-filter') in (
        grenade / 'pluginrc').read_text().splitlines()


MERGE = r'''
set -e
CONFIG_AWK_CMD=gawk
source "$DEVSTACK/inc/ini-config"
source "$DEVSTACK/inc/meta-config"
die() { shift; echo "$*" >&2; exit 1; }
warn() { shift; echo "$*" >&2; }
merge_config_group "$LOCAL_CONF" post-config
'''


def merged(trees, tmp_path):
    """The job's local.conf, its localrc, and the files devstack's own
    ``merge_config_group`` writes from its post-config sections, by name
    (``nova.conf``, ``nova-fake.conf-2`` ...)."""
    if shutil.which('gawk') is None:
        # mawk (Debian's default awk) cannot parse devstack's ini scripts.
        pytest.skip('devstack\'s ini functions run GNU awk, which devstack '
                    'installs (Debian: gawk)')
    variables, text = rendered(trees, tmp_path)
    etc = tmp_path / 'etc'
    etc.mkdir()
    # Each file the job's other post-config sections name (devstack's
    # own: $NEUTRON_CONF ...) somewhere of its own.
    env = {name: str(etc / ('other-' + name.lower()))
           for name in re.findall(r'^\[\[post-config\|\$(\w+)', text, re.M)}
    env.update({'PATH': os.environ['PATH'], 'DEVSTACK': str(trees[0]),
           'LOCAL_CONF': str(tmp_path / 'local.conf.controller'),
           'DATA_DIR': '/opt/stack/data', 'STACK_USER': 'stack',
           'NOVA_CONF': str(etc / 'nova.conf'),
           'NOVA_CPU_CONF': str(etc / 'nova-cpu.conf'),
           'NOVA_FAKE_CONF': str(etc / 'nova-fake.conf')})
    subprocess.run(['bash', '-c', MERGE], env=env, check=True, timeout=60)
    files = {}
    for path in etc.glob('nova*'):
        conf = configparser.ConfigParser(interpolation=None)
        conf.read(path)
        files[path.name] = conf
    localrc = dict(re.findall(r'^(\w+)="([^"]*)"$', text, re.M))
    return localrc, files


def test_the_jobs_fake_nodes_differ_as_the_tempest_plugin_needs(trees,
                                                                tmp_path):
    """Three fake nodes: one an untagged raw boot goes to, one reserved
    with the trait the plugin's tests and nova-scheduler's isolation name,
    one that boots nothing tempest uploads (Nova's own exclude list)."""
    localrc, files = merged(trees, tmp_path)
    count = int(localrc['NUMBER_FAKE_NOVA_COMPUTE'])
    reserved = localrc['IMAGE_TYPE_TEMPEST_RESERVED_TRAIT']
    nova = files['nova.conf']
    assert nova['image_isolation']['rules'] == reserved
    assert nova.getboolean('image_isolation', 'enabled')
    fakes = [files.get('nova-fake.conf-%d' % n) for n in range(1, count + 1)]
    fakes = [conf if conf is not None else configparser.ConfigParser()
             for conf in fakes]
    assert not set(files) - {'nova.conf', 'nova-cpu.conf'} - {
        'nova-fake.conf-%d' % n for n in range(1, count + 1)}
    default = files['nova-cpu.conf'].get('virt_capabilities', 'custom_traits')

    def kind(conf):
        traits = conf.get('virt_capabilities', 'custom_traits',
                          fallback=default).split(',')
        if reserved in traits:
            return 'reserved'
        if 'raw' in conf.get('compute', 'image_type_exclude_list',
                             fallback='').split(','):
            return 'no raw'
        return 'raw'
    assert sorted(map(kind, fakes)) == ['no raw', 'raw', 'reserved']
    # A node's own custom_traits replaces nova-cpu.conf's: the trait the
    # fault phase watches stays on every node.
    for conf in fakes:
        assert default in conf.get('virt_capabilities', 'custom_traits',
                                   fallback=default).split(',')


def test_nova_services_log_to_files_and_the_computes_to_the_journal(
        trees, tmp_path):
    """nova.conf's services write DATA_DIR/<binary>.log (the plugin
    points tempest at nova-scheduler's) and keep stderr for the journal;
    nova-cpu.conf, devstack's copy of nova.conf, takes log_dir out again,
    for the reporters' lines are read from the journal."""
    _, files = merged(trees, tmp_path)
    nova = files['nova.conf']['DEFAULT']
    assert nova['log_dir'] == '/opt/stack/data'
    assert nova.getboolean('use_stderr')
    assert files['nova-cpu.conf']['DEFAULT']['log_dir'] == ''
