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

"""OpenStack-Ansible's recipe, run by Ansible and config_template.

``doc/source/install/openstack-ansible.rst``'s ``user_variables.yml``, as
ansible-core templates it per host (the package list), and as the
``config_template`` plugin the os_nova role writes ``nova.conf`` with
merges it into the role's ``[filter_scheduler]`` (ansible-config-template
2.1.1 from the package index, with ansible-core 2.18:
``tests/deploy_tools.py``). The role itself is not on the package index:
its template's lines come from ``tests/repository/openstack_ansible_facts.py``.
Then the reporter's playbook, run for real, and systemd reading the unit
it leaves.
"""

import json
import os
import re
import shutil
import subprocess
import textwrap

from packaging.requirements import Requirement
import pytest
import yaml

from tests import deploy_tools
from tests.repository import openstack_ansible_facts as facts
from tests.repository import test_config_blocks as blocks
from tests.repository import test_deploy_recipes as recipes

pytestmark = pytest.mark.slow

NOVAS = 'nova.scheduler.filters.all_filters'
OURS = 'image_type_filter.nova.all_filters'
BLAZAR = 'blazarnova.scheduler.filters.blazar_filter.BlazarFilter'


@pytest.fixture(scope='module')
def venv(tmp_path_factory):
    return deploy_tools.install(
        'openstack-ansible', str(tmp_path_factory.mktemp('osa')))


def ansible_env(venv, home):
    plugins = deploy_tools.share(venv, 'ansible', 'plugins')
    home.mkdir(exist_ok=True)
    return dict(os.environ, HOME=str(home),
                ANSIBLE_ACTION_PLUGINS=os.path.join(plugins, 'action'),
                ANSIBLE_LIBRARY=os.path.join(plugins, 'modules'),
                ANSIBLE_LOCAL_TEMP=str(home / 'tmp'),
                ANSIBLE_REMOTE_TEMP=str(home / 'tmp'),
                # Modules run by this virtualenv's Python, not whichever
                # python3 the machine's PATH finds.
                ANSIBLE_PYTHON_INTERPRETER=os.path.join(venv, 'bin',
                                                        'python'),
                ANSIBLE_LOCALHOST_WARNING='False',
                ANSIBLE_INVENTORY_UNPARSED_WARNING='False',
                # One line per host: "host | SUCCESS => {json}".
                ANSIBLE_STDOUT_CALLBACK='oneline',
                ANSIBLE_LOAD_CALLBACK_PLUGINS='True',
                ANSIBLE_NOCOLOR='True')


def run(venv, tmp_path, command, *args):
    proc = subprocess.run(
        [os.path.join(venv, 'bin', command), *args], capture_output=True,
        text=True, timeout=300, env=ansible_env(venv, tmp_path / 'home'),
        cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def results(output):
    """{host: module result} of an ad-hoc command's output."""
    found = {}
    for line in output.splitlines():
        host, result = re.match(r'^(\S+) \| SUCCESS => (\{.*\})$',
                                line).groups()
        found[host] = json.loads(result)
    return found


@pytest.fixture(scope='module')
def release(tmp_path_factory):
    return deploy_tools.build_release(str(tmp_path_factory.mktemp('rel')))


def wheel_url(release, digest=None):
    """The built wheel as a file: URL, and its sha256 (or ``digest``)."""
    [wheel] = [n for n in os.listdir(release) if n.endswith('.whl')]
    with open(os.path.join(release, 'SHA256SUMS')) as f:
        sums = {name: value for value, name in
                (line.split() for line in f)}
    return 'file://%s/%s' % (release, wheel), digest or sums[wheel]


def page_packages(tmp_path, url, digest):
    """user_variables.yml from the page, its placeholders filled from
    the wheel's ``url`` and ``digest``."""
    path = tmp_path / 'user_variables.yml'
    text = recipes.page_yaml(recipes.OSA_PAGE)[recipes.USER_VARIABLES]
    assert recipes.PAGE_WHEEL_URL in text and 'WHEEL_SHA256' in text
    wheel = os.path.basename(url)
    path.write_text(text.replace(recipes.PAGE_WHEEL_URL,
                                 os.path.dirname(url))
                    .replace('-%s-' % recipes.PAGE_VERSION, '-%s-' % wheel[
                        len('image_type_filter-'):-len('-py3-none-any.whl')])
                    .replace('WHEEL_SHA256', digest))
    return path


def host_packages(venv, tmp_path, variables):
    inventory = tmp_path / 'inventory'
    inventory.write_text(
        '[nova_scheduler]\nsched-1\naio-1\n[nova_compute]\ncompute-1\n'
        'aio-1\n[nova_api_os_compute]\napi-1\n[all:vars]\n'
        'ansible_connection=local\n')
    output = run(venv, tmp_path, 'ansible', 'all', '-i', str(inventory),
                 '-m', 'debug', '-a', 'var=nova_user_pip_packages',
                 '-e', '@%s' % variables)
    found = {}
    for host, result in results(output).items():
        [line] = result['nova_user_pip_packages']
        found[host] = line
    return found


def test_each_host_gets_the_package_its_groups_need(venv, release,
                                                    tmp_path):
    url, digest = wheel_url(release)
    packages = host_packages(venv, tmp_path,
                             page_packages(tmp_path, url, digest))
    extras = {}
    for host, line in packages.items():
        requirement = Requirement(line)
        assert requirement.name == 'image-type-filter'
        # A direct reference: pip asks no index for the name.
        assert requirement.url == '%s#sha256=%s' % (url, digest)
        assert deploy_tools.pbr_version() in requirement.url
        extras[host] = requirement.extras
    assert extras == {'sched-1': {'cli'}, 'api-1': set(),
                      'compute-1': {'cli'}, 'aio-1': {'cli'}}


@pytest.mark.parametrize('right_hash', [True, False])
def test_pip_installs_the_compute_hosts_line_only_with_its_hash(
        venv, release, tmp_path, right_hash):
    """pip installs the line a compute host gets from the wheel's URL
    (dependencies left out here: offline), and refuses it when the
    sha256 after #sha256= is not the file's."""
    url, digest = wheel_url(release, None if right_hash else '0' * 64)
    line = host_packages(venv, tmp_path, page_packages(
        tmp_path, url, digest))['compute-1']
    target = tmp_path / 'nova-venv'
    subprocess.run([os.path.join(venv, 'bin', 'python'), '-m', 'venv',
                    str(target)], check=True, timeout=300)
    proc = subprocess.run(
        [str(target / 'bin' / 'pip'), 'install', '-q', '--no-index',
         '--no-deps', '--disable-pip-version-check', line],
        capture_output=True, text=True, timeout=600)
    if right_hash:
        assert proc.returncode == 0, proc.stderr
        assert (target / 'bin' / 'virt-capabilities').exists()
    else:
        assert proc.returncode != 0
        assert 'DO NOT MATCH THE HASHES' in proc.stderr


def scheduler_template(extra_filters=(), blazar=False):
    """[filter_scheduler] as os_nova's template writes it on a
    nova_scheduler host (openstack_ansible_facts)."""
    enabled = list(facts.VARIABLES['nova_scheduler_default_filters'])
    available = ''
    if blazar:
        enabled += facts.VARIABLES['nova_blazar_scheduler_filters']
        available = 'available_filters = %s\navailable_filters = %s\n' % (
            NOVAS, BLAZAR)
    enabled += list(extra_filters)
    return ('[DEFAULT]\n%s\n[filter_scheduler]\n%senabled_filters = %s\n'
            'host_subset_size = 1\n' % (
                ''.join('%s = %s\n' % kv
                        for kv in facts.NOVA_CONF_DEFAULTS.items()),
                available, ','.join(enabled)))


def config_template(venv, tmp_path, template, overrides):
    """The nova.conf config_template writes from ``template`` with
    ``overrides`` (nova_nova_conf_overrides)."""
    src = tmp_path / 'nova.conf.j2'
    src.write_text(template)
    dest = tmp_path / 'nova.conf'
    run(venv, tmp_path, 'ansible', 'localhost', '-c', 'local', '-m',
        'config_template', '-a', json.dumps({
            'src': str(src), 'dest': str(dest), 'config_type': 'ini',
            'config_overrides': overrides}))
    return dest.read_text()


def test_the_overrides_load_both_filter_sets(venv, tmp_path):
    variables = yaml.safe_load(recipes.page_yaml(recipes.OSA_PAGE)[
        recipes.USER_VARIABLES])
    written = config_template(
        venv, tmp_path,
        scheduler_template(variables['nova_scheduler_extra_filters']),
        variables['nova_nova_conf_overrides'])
    values = blocks.parse_as_nova(tmp_path, written)
    assert sorted(values[('filter_scheduler', 'available_filters')]) == \
        [OURS, NOVAS]
    assert values[('filter_scheduler', 'enabled_filters')] == \
        facts.VARIABLES['nova_scheduler_default_filters'] + [
            'ImageTypeRebuildFilter']
    assert values[('scheduler', 'filter_hosts_by_image_type_support')] is \
        True
    # What the page says nova-scheduler's nova.conf then has.
    documented = blocks.parse_as_nova(tmp_path, recipes.osa_result_block())
    assert documented and all(values[key] == value
                              for key, value in documented.items())


def test_a_list_would_be_one_filter_path_nova_cannot_import(venv,
                                                             tmp_path):
    """Why the page gives available_filters as a mapping."""
    written = config_template(venv, tmp_path, scheduler_template(), {
        'filter_scheduler': {'available_filters': [NOVAS, OURS]}})
    assert blocks.parse_as_nova(tmp_path, written)[
        ('filter_scheduler', 'available_filters')] == ['%s,%s' % (NOVAS,
                                                                  OURS)]


def test_with_blazar_the_override_replaces_its_line(venv, tmp_path):
    """Why the page says to add Blazar's path to the mapping."""
    overrides = yaml.safe_load(recipes.page_yaml(recipes.OSA_PAGE)[
        recipes.USER_VARIABLES])['nova_nova_conf_overrides']
    written = config_template(venv, tmp_path,
                              scheduler_template(blazar=True), overrides)
    assert BLAZAR not in blocks.parse_as_nova(tmp_path, written)[
        ('filter_scheduler', 'available_filters')]
    with_blazar = json.loads(json.dumps(overrides))
    with_blazar['filter_scheduler']['available_filters'][BLAZAR] = None
    written = config_template(venv, tmp_path,
                              scheduler_template(blazar=True), with_blazar)
    assert sorted(blocks.parse_as_nova(tmp_path, written)[
        ('filter_scheduler', 'available_filters')]) == sorted(
        [NOVAS, OURS, BLAZAR])


def test_the_playbook_installs_the_reporter_beside_nova_compute(venv,
                                                                tmp_path):
    """ansible-playbook runs it (all but the systemd start) on a
    nova_compute host whose nova venv has the package's unit; systemd
    reads the unit and drop-in it leaves."""
    bin_dir = tmp_path / 'openstack' / 'venvs' / 'nova-32.0.0' / 'bin'
    shipped = bin_dir.parent / 'share' / 'image-type-filter' / 'systemd'
    shipped.mkdir(parents=True)
    shutil.copy(recipes.SHIPPED_UNIT, shipped)
    bin_dir.mkdir()
    systemd_dir = tmp_path / 'systemd'
    systemd_dir.mkdir()  # /etc/systemd/system on a host
    inventory = tmp_path / 'inventory'
    inventory.write_text('[nova_compute]\ncompute-1 '
                         'ansible_connection=local\n')
    run(venv, tmp_path, 'ansible-playbook', '-i', str(inventory),
        recipes.OSA_PLAYBOOK, '--skip-tags', 'service',
        '-e', 'nova_bin=%s' % bin_dir,
        '-e', 'virt_capabilities_systemd_dir=%s' % systemd_dir)
    unit = systemd_dir / 'virt-capabilities.service'
    drop_in = systemd_dir / 'virt-capabilities.service.d' / \
        'openstack-ansible.conf'
    assert unit.read_text() == open(recipes.SHIPPED_UNIT).read()
    text = drop_in.read_text()
    assert re.findall(r'^ExecStart=(.*)$', text, re.M) == [
        '', '%s/virt-capabilities report --config-file %s --wait 300 '
        '--interval 300' % (bin_dir, facts.NOVA_CONF)]
    # Only where it runs from: the unit says whom it follows.
    assert '[Unit]' not in text
    # systemd's own reading, in a root of the test's own.
    analyze = shutil.which('systemd-analyze')
    assert analyze, 'systemd-analyze is needed (Debian: systemd)'
    root = tmp_path / 'root'
    shutil.copytree('/usr/lib/systemd/system',
                    root / 'usr' / 'lib' / 'systemd' / 'system',
                    symlinks=True)
    shutil.copytree(systemd_dir, root / 'etc' / 'systemd' / 'system')
    for program in re.findall(r'^Exec\w+=-?(\S+)',
                              unit.read_text() + text, re.M):
        stand_in = root / program.lstrip('/')
        stand_in.parent.mkdir(parents=True, exist_ok=True)
        stand_in.write_text('#!/bin/sh\n')
        stand_in.chmod(0o755)
    proc = subprocess.run(
        [analyze, 'verify', '--root', str(root),
         '/etc/systemd/system/virt-capabilities.service'],
        capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, '', '')


OSA_REMOVE = os.path.join(os.path.dirname(recipes.OSA_PLAYBOOK),
                          'virt-capabilities-remove.yml')


def installed_reporter(venv, tmp_path):
    """A nova_compute host (a directory) after virt-capabilities.yml, its
    venv's virt-capabilities a stand-in that logs its arguments and
    whether the unit and drop-in were still there; (inventory, bin
    directory, systemd directory, log)."""
    bin_dir = tmp_path / 'openstack' / 'venvs' / 'nova-32.0.0' / 'bin'
    shipped = bin_dir.parent / 'share' / 'image-type-filter' / 'systemd'
    shipped.mkdir(parents=True)
    shutil.copy(recipes.SHIPPED_UNIT, shipped)
    bin_dir.mkdir()
    systemd_dir = tmp_path / 'systemd'
    systemd_dir.mkdir()
    log = tmp_path / 'calls'
    command = bin_dir / 'virt-capabilities'
    command.write_text(
        '#!/bin/sh\necho "$*" >> %s\n'
        '[ -f %s/virt-capabilities.service ] && '
        '[ -d %s/virt-capabilities.service.d ] && echo "unit there" >> %s\n'
        % (log, systemd_dir, systemd_dir, log))
    command.chmod(0o755)
    inventory = tmp_path / 'inventory'
    inventory.write_text('[nova_compute]\ncompute-1 '
                         'ansible_connection=local\n')
    run(venv, tmp_path, 'ansible-playbook', '-i', str(inventory),
        recipes.OSA_PLAYBOOK, '--skip-tags', 'service',
        '-e', 'nova_bin=%s' % bin_dir,
        '-e', 'virt_capabilities_systemd_dir=%s' % systemd_dir)
    return inventory, bin_dir, systemd_dir, log


def test_the_removal_play_takes_the_traits_off_first(venv, tmp_path):
    """ansible-playbook runs it (all but systemd's part, which this
    machine does not run): virt-capabilities remove from the venv with
    the reporter's nova.conf, while the unit is still there, then the
    unit and drop-in go."""
    inventory, bin_dir, systemd_dir, log = installed_reporter(venv,
                                                              tmp_path)
    run(venv, tmp_path, 'ansible-playbook', '-i', str(inventory),
        OSA_REMOVE, '--skip-tags', 'service',
        # Root already: no nova user to become on this machine.
        '-e', 'ansible_become=false',
        '-e', 'nova_bin=%s' % bin_dir,
        '-e', 'virt_capabilities_systemd_dir=%s' % systemd_dir)
    assert log.read_text().splitlines() == [
        'remove --config-file %s' % facts.NOVA_CONF, 'unit there']
    assert list(systemd_dir.iterdir()) == []
    # The reporter ran with the same file: its records are found under
    # the same name (its nova-compute's host).
    with open(recipes.OSA_PLAYBOOK) as f:
        assert 'report --config-file %s --wait' % facts.NOVA_CONF in f.read()


def remove_play(venv, tmp_path, inventory, bin_dir, systemd_dir):
    return run(venv, tmp_path, 'ansible-playbook', '-i', str(inventory),
               OSA_REMOVE, '--skip-tags', 'service',
               '-e', 'ansible_become=false', '-e', 'nova_bin=%s' % bin_dir,
               '-e', 'virt_capabilities_systemd_dir=%s' % systemd_dir)


def changed(output):
    """The tasks the oneline callback says changed something."""
    assert 'compute-1 | ' in output
    return len(re.findall(r'^compute-1 \| CHANGED', output, re.M))


def test_the_removal_play_again_changes_nothing(venv, tmp_path):
    """Run twice, or on a host whose reporter is gone: no remove is run,
    nothing changes, exit 0 (run() checks it)."""
    inventory, bin_dir, systemd_dir, log = installed_reporter(venv,
                                                              tmp_path)
    first = remove_play(venv, tmp_path, inventory, bin_dir, systemd_dir)
    assert changed(first) >= 2  # remove, and the unit's files
    log.unlink()
    out = remove_play(venv, tmp_path, inventory, bin_dir, systemd_dir)
    assert changed(out) == 0
    assert not log.exists()
    assert list(systemd_dir.iterdir()) == []


def test_a_failed_removal_play_is_run_again_as_it_is(venv, tmp_path):
    inventory, bin_dir, systemd_dir, log = installed_reporter(venv,
                                                              tmp_path)
    command = bin_dir / 'virt-capabilities'
    working = command.read_text()
    command.write_text(working + 'exit 1\n')
    with pytest.raises(AssertionError):
        remove_play(venv, tmp_path, inventory, bin_dir, systemd_dir)
    assert sorted(p.name for p in systemd_dir.iterdir()) == [
        'virt-capabilities.service', 'virt-capabilities.service.d']
    command.write_text(working)
    log.unlink()
    remove_play(venv, tmp_path, inventory, bin_dir, systemd_dir)
    assert log.read_text().splitlines() == [
        'remove --config-file %s' % facts.NOVA_CONF, 'unit there']
    assert list(systemd_dir.iterdir()) == []


def test_the_removal_play_in_check_mode_changes_nothing(venv, tmp_path):
    inventory, bin_dir, systemd_dir, log = installed_reporter(venv,
                                                              tmp_path)
    out = run(venv, tmp_path, 'ansible-playbook', '-i', str(inventory),
              OSA_REMOVE, '--check', '-e', 'ansible_become=false',
              '--skip-tags', 'service',
              '-e', 'nova_bin=%s' % bin_dir,
              '-e', 'virt_capabilities_systemd_dir=%s' % systemd_dir)
    assert 'compute-1' in out
    assert not log.exists()
    assert sorted(p.name for p in systemd_dir.iterdir()) == [
        'virt-capabilities.service', 'virt-capabilities.service.d']


def test_the_removal_play_uses_only_what_the_role_has():
    with open(OSA_REMOVE) as f:
        text = f.read()
    [play] = yaml.safe_load(text)
    assert play['hosts'] == facts.GROUPS['nova-compute']
    used = set(re.findall(r'\b(nova_\w+)\b', text)) - set(
        facts.GROUPS.values())
    assert used <= set(facts.VARIABLES), used - set(facts.VARIABLES)
    with open(recipes.OSA_PLAYBOOK) as f:
        [deploy] = yaml.safe_load(f)
    assert play['vars']['virt_capabilities_venv_bin'] == \
        deploy['vars']['virt_capabilities_venv_bin']


def rollback_variables(step):
    """user_variables.yml of the upgrade page's OpenStack-Ansible
    rollback step (``first``, ``second``)."""
    with open(os.path.join(blocks.REPO, 'doc', 'source', 'install',
                           'upgrade.rst')) as f:
        text = f.read()
    caption = 'user_variables.yml (rollback, %s step)' % step
    [block] = re.findall(
        r'^( *)\.\. code-block:: yaml\n\1 +:caption: %s\n\n'
        r'((?:(?:\1 +.*)?\n)+)' % re.escape(caption), text, re.M)
    return yaml.safe_load(textwrap.dedent(block[1]))


def test_the_rollback_steps_write_what_the_upgrade_page_says(venv,
                                                             tmp_path):
    """config_template writes nova-scheduler's nova.conf from each step's
    variables over os_nova's template: Nova's mechanisms beside the
    filters, then Nova's alone."""
    values = {}
    for step in ('first', 'second'):
        variables = rollback_variables(step)
        where = tmp_path / step
        where.mkdir()
        written = config_template(
            venv, where,
            scheduler_template(variables.get('nova_scheduler_extra_filters',
                                             ())),
            variables['nova_nova_conf_overrides'])
        values[step] = blocks.parse_as_nova(where, written)
        assert values[step][('scheduler',
                             'query_placement_for_image_type_support')]
        assert 'image_metadata_prefilter = True' in written
        assert 'enable_isolated_aggregate_filtering = True' in written
    defaults = facts.VARIABLES['nova_scheduler_default_filters']
    first, second = values['first'], values['second']
    assert sorted(first[('filter_scheduler', 'available_filters')]) == \
        [OURS, NOVAS]
    assert first[('filter_scheduler', 'enabled_filters')] == \
        defaults + ['ImageTypeRebuildFilter']
    # No line: Nova's default, its own filters alone.
    assert ('filter_scheduler', 'available_filters') not in second
    assert second[('filter_scheduler', 'enabled_filters')] == defaults
    assert ('scheduler', 'filter_hosts_by_image_type_support') not in \
        second


@pytest.mark.parametrize('playbook', [recipes.OSA_PLAYBOOK, OSA_REMOVE])
def test_ansible_playbook_checks_the_syntax(venv, tmp_path, playbook):
    inventory = tmp_path / 'inventory'
    inventory.write_text('[nova_compute]\ncompute-1 '
                         'ansible_connection=local\n')
    out = run(venv, tmp_path, 'ansible-playbook', '-i', str(inventory),
              playbook, '--syntax-check')
    assert 'playbook: ' in out
