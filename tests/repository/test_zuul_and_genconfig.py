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

"""Gate wiring and the generated sample configuration."""

import os
import subprocess
import sys

import yaml

from tests import helpers

REPO = helpers.REPO


def zuul():
    with open(os.path.join(REPO, '.zuul.yaml')) as f:
        return yaml.safe_load(f)


def test_devstack_job_wiring():
    jobs = {item['job']['name']: item['job'] for item in zuul()
            if 'job' in item}
    job = jobs['image-type-filter-devstack-multinode']
    assert job['parent'] == 'devstack-tempest'
    # A multinode job: devstack's two-node nodeset, its subnode group
    # running nova-compute (the reporter follows it) on fake hosts.
    assert job['nodeset'] == 'devstack-two-node-debian-bookworm'
    subnode = job['group-vars']['subnode']
    assert subnode['devstack_localrc']['VIRT_DRIVER'] == 'fake'
    assert 'image-type-filter' in job['vars']['devstack_plugins']
    scheduler = job['vars']['devstack_local_conf']['post-config'][
        '$NOVA_CONF']['scheduler']
    assert scheduler['filter_hosts_by_image_type_support'] is True
    project = [item['project'] for item in zuul() if 'project' in item][0]
    check = [j if isinstance(j, str) else next(iter(j))
             for j in project['check']['jobs']]
    for name in jobs:
        assert name in check
    assert 'image-type-filter-devstack-multinode' in project['gate']['jobs']


def test_devstack_job_runs_the_gate_suites():
    """The devstack job runs the plugin's tests (devstack_job's
    PLUGIN_REGEX, which the gate's run with the filters off excludes) and
    tempest's, with a tox env that takes a regex."""
    from gate_cloud import devstack_job
    jobs = {item['job']['name']: item['job'] for item in zuul()
            if 'job' in item}
    job_vars = jobs['image-type-filter-devstack-multinode']['vars']
    assert job_vars['tempest_test_regex'].startswith(
        '(%s)|(^tempest\\.' % devstack_job.PLUGIN_REGEX)
    # The run-tempest role's default env, smoke, takes no regex.
    assert job_vars['tox_envlist'] == 'all'
    # The family the tests check is the one nova-scheduler runs.
    family = job_vars['devstack_localrc']['IMAGE_TYPE_TEMPEST_FAMILY']
    assert job_vars['devstack_local_conf']['post-config']['$NOVA_CONF'][
        'image_metadata_prefilter']['families'] == family


def listed_jobs():
    project = [item['project'] for item in zuul() if 'project' in item][0]
    for pipeline in ('check', 'gate'):
        for job in project[pipeline]['jobs']:
            yield job if isinstance(job, str) else next(iter(job))


def test_every_listed_tox_job_has_its_tox_env():
    """openstack-tox-<env> runs "tox -e <env>": the env must exist (or the
    job silently runs the unit tests under another name)."""
    import configparser
    import itertools
    import re
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(os.path.join(REPO, 'tox.ini'))
    envs = set()
    for section in parser.sections():
        if section.startswith('testenv:'):
            parts = re.split(r'\{([^}]*)\}', section[len('testenv:'):])
            choices = [[p] if i % 2 == 0 else p.split(',')
                       for i, p in enumerate(parts)]
            envs |= {''.join(c) for c in itertools.product(*choices)}
    local = {item['job']['name'] for item in zuul() if 'job' in item}
    for job in set(listed_jobs()) - local:
        assert job.startswith('openstack-tox-'), job
        assert job[len('openstack-tox-'):] in envs, job
    # release-notes-jobs-python3 runs tox -e releasenotes.
    assert 'releasenotes' in envs


def tox_env_commands(name):
    """The commands tox runs for env ``name`` ({a,b} sections expanded)."""
    import configparser
    import itertools
    import re
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(os.path.join(REPO, 'tox.ini'))
    for section in parser.sections():
        if not section.startswith('testenv:'):
            continue
        parts = re.split(r'\{([^}]*)\}', section[len('testenv:'):])
        choices = [[p] if i % 2 == 0 else p.split(',')
                   for i, p in enumerate(parts)]
        names = {''.join(c) for c in itertools.product(*choices)}
        if name in names and parser.has_option(section, 'commands'):
            return parser.get(section, 'commands')
    return parser.get('testenv', 'commands')


def test_zuul_functional_and_nova_jobs_run_those_suites():
    jobs = {item['job']['name']: item['job'] for item in zuul()
            if 'job' in item}
    functional = jobs['image-type-filter-tox-functional']['vars'][
        'tox_envlist']
    assert 'tests/functional' in tox_env_commands(functional)
    for name in ('image-type-filter-tox-nova',
                 'image-type-filter-tox-nova-oldest'):
        assert 'tests/nova' in tox_env_commands(
            jobs[name]['vars']['tox_envlist'])
    assert 'tests/unit' in tox_env_commands('py311')
    assert 'tests/repository' in tox_env_commands('py311')
    project = [item['project'] for item in zuul() if 'project' in item][0]
    assert 'image-type-filter-tox-nova' in project['gate']['jobs']


def test_every_suite_under_tests_runs_in_a_zuul_job():
    """A new folder of tests under tests/ is run by some job's tox env
    (openstack-python3-jobs runs py311, the project's jobs theirs)."""
    jobs = {item['job']['name']: item['job'] for item in zuul()
            if 'job' in item}
    commands = tox_env_commands('py311') + ''.join(
        tox_env_commands(job['vars']['tox_envlist'])
        for job in jobs.values()
        if 'tox_envlist' in job.get('vars', {}) and job['vars'][
            'tox_envlist'] != 'all')
    tests = os.path.join(REPO, 'tests')
    suites = sorted(
        name for name in os.listdir(tests)
        if any(f.startswith('test_') and f.endswith('.py')
               for _, _, files in os.walk(os.path.join(tests, name))
               for f in files))
    assert {'functional', 'nova', 'repository', 'unit'} <= set(suites)
    assert [s for s in suites if 'tests/' + s not in commands] == []


def generate(tmp_path, name):
    out = tmp_path / (name + '.conf.sample')
    subprocess.run(
        [sys.executable, '-m', 'oslo_config.generator', '--config-file',
         os.path.join(REPO, 'etc', 'oslo-config-generator', name + '.conf'),
         '--output-file', str(out)], check=True, cwd=REPO)
    return out.read_text()


def _flat(text):
    return ' '.join(line.lstrip('# ').strip()
                    for line in text.splitlines())


def test_every_option_is_in_the_sample_with_its_help(tmp_path):
    from image_type_filter import conf as itf_conf
    from virt_capabilities import conf as vc_conf
    for name, list_opts in (('virt-capabilities', vc_conf.list_opts),
                            ('image-type-filter', itf_conf.list_opts)):
        sample = generate(tmp_path, name)
        flat = _flat(sample)
        for group, opts in list_opts():
            group_name = getattr(group, 'name', group)
            assert '[%s]' % group_name in sample
            for opt in opts:
                assert opt.help, '%s.%s has no help' % (group_name, opt.dest)
                assert '#%s = ' % opt.dest in sample or \
                    '%s =' % opt.dest in sample, opt.dest
                first_words = ' '.join(opt.help.split()[:6])
                assert first_words in flat, (group_name, opt.dest)
