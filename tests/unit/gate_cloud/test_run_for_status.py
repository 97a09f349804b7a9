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

"""processes.run_for_status: a one-shot command's exit code and output,
appended to the log it is given (a path or a string, as cloud.json holds
the reporters' logs)."""

import sys

from gate_cloud import layout
from gate_cloud import processes


def test_the_exit_code_and_output_come_back_and_go_to_the_log(
        tmp_path, monkeypatch):
    monkeypatch.setattr(layout, 'STATE', tmp_path)  # its working directory
    log = tmp_path / 'logs' / 'reporter.log'
    code, output = processes.run_for_status(
        'a status check', [sys.executable, '-c',
                           'import sys; print("said"); sys.exit(3)'],
        env={}, log=str(log))
    assert (code, output.strip()) == (3, 'said')
    assert 'said' in log.read_text() and '[exit 3]' in log.read_text()
