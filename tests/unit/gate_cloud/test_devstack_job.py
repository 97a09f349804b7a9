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

"""What the devstack job reads from stack.sh's and tempest's output."""

import subprocess

import pytest

from gate_cloud import GateError
from gate_cloud import devstack_job

TOTALS = """======
Totals
======
Ran: 13 tests in 45.0000 sec.
 - Passed: 6
 - Skipped: 7
 - Expected Fail: 0
 - Unexpected Success: 0
 - Failed: %d
Sum of execute time for each test: 51.2000 sec.
"""
FAILED = ('{1} image_type_tempest_plugin.tests.api.test_image_types.'
          'ImageMetadataFamilyTest.test_unsatisfiable_value_is_refused '
          '[12.345s] ... FAILED')


def test_a_clean_run_gives_its_counts():
    counts = devstack_job.judge_tempest(
        'filters on', (TOTALS % 0).splitlines(), 0, 'log')
    assert counts == {'Passed': 6, 'Skipped': 7, 'Failed': 0}


def test_a_failed_test_fails_the_job_naming_it():
    lines = [FAILED] + (TOTALS % 1).splitlines()
    with pytest.raises(GateError, match='ImageMetadataFamilyTest'):
        devstack_job.judge_tempest('filters on', lines, 1, 'log')


def test_a_failed_run_with_no_test_named_fails_with_its_exit():
    with pytest.raises(GateError, match='exit 2'):
        devstack_job.judge_tempest('filters on', ['tox: error'], 2, 'log')


def test_a_run_of_no_test_fails():
    lines = (TOTALS % 0).replace(' - Passed: 6', ' - Passed: 0')
    with pytest.raises(GateError, match='ran no test'):
        devstack_job.judge_tempest('filters off', lines.splitlines(), 0,
                                   'log')


def test_a_failed_stack_names_devstacks_last_step_and_call():
    lines = [
        "+ ./stack.sh:main:1200 :   echo_summary 'Starting Nova'",
        "+ ./stack.sh:main:1300 :   echo_summary 'Reporting image-type "
        "traits'",
        '[Call Trace]',
        './stack.sh:1544:run_phase',
        '/opt/stack/devstack/functions-common:2000:die',
    ]
    assert devstack_job._last_phase(lines) == (
        '"Reporting image-type traits" at ./stack.sh:1544:run_phase')


def ok(test):
    return '{0} %s [1.0s] ... ok' % test


PEER = 'tempest.api.compute.servers.test_create_server.ServersTestJSON.t'
PLUGIN = 'image_type_tempest_plugin.tests.api.test_image_types.RebuildTest.t'


def passed(*tests):
    return {'passed tests': {
        devstack_job.PASSED_TEST.search(ok(t)).group(1) for t in tests}}


def test_the_compute_tests_pass_alike_with_the_filters_off():
    devstack_job.same_peer_tests(passed(PEER, PLUGIN), passed(PEER))


def test_a_compute_test_lost_with_the_filters_off_fails_the_job():
    with pytest.raises(GateError, match='only on: ' + PEER):
        devstack_job.same_peer_tests(passed(PEER, PLUGIN), passed())


def test_cis_tmpdir_never_reaches_a_program_run_in_the_new_root(
        tmp_path, monkeypatch):
    """CI sets TMPDIR to a directory of this machine; debootstrap's second
    stage and chroot run in the new root, which has none (update-ca-
    certificates' mktemp failed there)."""
    from gate_cloud import container
    monkeypatch.setenv('TMPDIR', str(tmp_path / 'ci-tmp'))
    seen = []

    def run(argv, **kwargs):
        seen.append((argv, kwargs.get('env')))
        partial = tmp_path / 'root.partial'
        for sub in ('etc/apt/sources.list.d', 'etc/systemd/system',
                    'usr/local/share'):
            (partial / sub).mkdir(parents=True, exist_ok=True)
        return subprocess.CompletedProcess(argv, 0, '', '')
    monkeypatch.setattr(container.subprocess, 'run', run)
    monkeypatch.setattr(container, '_apt_mirror', lambda: 'http://mirror')
    container.build_rootfs(tmp_path / 'root', tmp_path / 'log')
    in_root = [(argv, env) for argv, env in seen
               if 'debootstrap' in argv or argv[0] == 'chroot']
    # In a mount namespace of its own: the /proc debootstrap mounts in
    # the root (inside the checkout) was walked by a pip install -e
    # running meanwhile in CI, which then failed.
    assert in_root[0][0][:3] == ['unshare', '--mount', 'debootstrap']
    assert in_root[0][1] is not None and 'TMPDIR' not in in_root[0][1]
    # chroot: a clean environment (env -i) with PATH and LANG alone.
    for argv, _ in in_root[1:]:
        assert argv[2:4] == ['env', '-i']
        assert not [a for a in argv if a.startswith('TMPDIR=')]


@pytest.mark.parametrize('off_run_fails', [False, True])
def test_hosts_that_cannot_boot_tempests_image_sit_out_the_run_without_filters(
        monkeypatch, off_run_fails):
    """The run without the filters disables the nodes lacking the raw
    trait after the filters go off and before tempest, and enables them
    (and the filters) again afterwards, even when that run fails."""
    steps = []
    excluded = []
    counts = {'Passed': 1, 'passed tests': set()}

    def tempest(box, variables, name, exclude=None, dest=None):
        steps.append('tempest ' + name)
        excluded.append(exclude)
        if name == 'filters off' and off_run_fails:
            raise GateError('tempest (filters off) failed')
        return counts

    monkeypatch.setattr(devstack_job, '_tempest', tempest)
    monkeypatch.setattr(devstack_job, '_filters', lambda box, on, dest:
                        steps.append('filters ' + on))
    monkeypatch.setattr(devstack_job, '_set_aside', lambda box, action, dest:
                        steps.append(action) or 'node3')
    monkeypatch.setattr(devstack_job, '_phase', lambda *a: None)
    monkeypatch.setattr(devstack_job, 'PHASES', ())
    try:
        devstack_job.prove(None, {'tempest_test_regex': 'x'}, 0.0)
    except GateError:
        assert off_run_fails
    assert steps == ['tempest filters on', 'filters False', 'disable',
                     'tempest filters off', 'enable', 'filters True']
    # The run without the filters leaves the plugin's tests out.
    assert excluded == [None, devstack_job.PLUGIN_REGEX]


def test_tempest_runs_the_jobs_regex_less_the_excluded(tmp_path,
                                                       monkeypatch):
    """tox gets the job's tempest_test_regex, and tempest's own
    --exclude-regex for what a run leaves out."""
    ran = []

    class Box:
        def command(self, argv, user=None, env=None):
            ran.append(argv)
            return ['sh', '-c', 'printf "%s"' % (TOTALS % 0).replace(
                '%', '%%')]

    monkeypatch.setattr(devstack_job, 'LOGS', tmp_path)
    variables = {'tempest_test_regex': '(^a\\.)|(^b\\.)',
                 'tox_envlist': 'all'}
    devstack_job._tempest(Box(), variables, 'filters off', '^a\\.')
    argv = ran[0]
    assert argv[argv.index('tempest') + 1:] == [
        '(^a\\.)|(^b\\.)', '--concurrency=%d' % devstack_job.CONCURRENCY,
        '--exclude-regex', '^a\\.']
    assert 'tox -e all -- "$@"' in argv[2]
    devstack_job._tempest(Box(), variables, 'filters on')
    assert '--exclude-regex' not in ran[1]
