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

"""candidates --server/--image/--flavor: what fails is one line.

Here, where Nova is not installed: the command says it needs Nova, and
usage errors come before anything. Where Nova is installed, the errors of
Keystone and of an endpoint that is not Nova's are in
tests/nova/test_candidates_command_errors.py, and the answers of a real
Nova in tests/nova/test_candidates_as_scheduler.py.
"""

import importlib.util

import pytest

from tests.functional.image_type_common import test_error_lines as error_lines
from tests.helpers import clean_env


def test_without_nova_it_is_one_line_naming_nova(tmp_path):
    """This environment has no Nova: --server, --image and --flavor say
    so, before any credential is used."""
    if importlib.util.find_spec('nova'):
        pytest.skip('Nova is installed here: tests/nova runs the command')
    conf = tmp_path / 'nova.conf'
    conf.write_text('')
    for what in (['--server', 'vm-1'], ['--image', 'cirros'],
                 ['--flavor', 'm1.tiny']):
        proc = error_lines.itf('candidates', '--config-file', str(conf),
                               *what, env=clean_env())
        assert proc.returncode == 2, proc.stderr
        error_lines.assert_one_line(proc, 'cannot import Nova here')


@pytest.mark.parametrize('args,text', [
    ([], 'give --server, --image, --flavor or --disk-format'),
    (['--server', 'vm-1', '--image', 'cirros'], 'not with --image'),
    (['--image', 'cirros', '--disk-format', 'raw'], 'not with --image'),
    (['--server', 'vm-1', '--image-property', 'a=b', '--strict'],
     '--image-property, --strict: only with --disk-format'),
    (['--disk-format', 'raw', '--project', 'p'],
     '--project: only with --server, --image or --flavor'),
    (['--server', 'vm-1'], 'give that nova.conf with --config-file'),
])
def test_usage_errors_exit_2_before_anything_is_asked(args, text):
    proc = error_lines.itf('candidates', *args)
    assert proc.returncode == 2, proc.stderr
    error_lines.assert_one_line(proc, text)
