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

"""What `demo --serve` prints passes its own checks: the nova.conf passes
`status`, and every "Then try" line runs cleanly, with that nova.conf and
with the printed OS_* line."""

import shlex
import signal
import subprocess
import sys

import pytest

from tests import helpers

COMMANDS = {'image-type-filter': [sys.executable, '-m',
                                  'image_type_filter.cmd.main'],
            'openstack': [sys.executable, '-m', 'openstackclient.shell']}


def printed(child):
    """(nova.conf text, OS_* environment, the "Then try" lines)."""
    child.err.wait_for('openstack image-type')
    text = child.err.text()
    conf = text.split('In a nova.conf (--config-file):\n', 1)[1]
    conf = conf.split('\n\n', 1)[0] + '\n'
    export = [line for line in text.splitlines()
              if line.strip().startswith('export OS_')][0]
    env = dict(item.split('=', 1) for item in shlex.split(export)[1:])
    tries = text.split('Then try:\n', 1)[1].splitlines()
    return conf, env, [shlex.split(t) for t in tries if t.startswith('  ')]


def run(argv, env):
    return subprocess.run(COMMANDS[argv[0]] + argv[1:], capture_output=True,
                          text=True, timeout=120,
                          env=helpers.clean_env(**env))


@pytest.mark.slow
def test_printed_conf_and_hints_pass_their_own_checks(tmp_path):
    with helpers.Child.module('image_type_filter.cmd.main', 'demo',
                              '--serve', '-f', 'json') as child:
        conf_text, env, tries = printed(child)
        conf = tmp_path / 'nova.conf'
        conf.write_text(conf_text)
        proc = run(['image-type-filter', 'status', '--config-file',
                    str(conf)], {})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert 'Failure' not in proc.stdout
        assert tries
        for argv in tries:
            # With the shell's OS_* line, as printed.
            proc = run(argv, env)
            assert proc.returncode == 0, (argv, proc.stderr)
            assert 'WARNING' not in proc.stderr, (argv, proc.stderr)
            if argv[0] == 'image-type-filter':
                # And with the printed nova.conf instead.
                proc = run(argv + ['--config-file', str(conf)], {})
                assert proc.returncode == 0, (argv, proc.stderr)
                assert 'WARNING' not in proc.stderr, (argv, proc.stderr)
        child.send(signal.SIGINT)
        assert child.finish() == 0, child.err.text()
