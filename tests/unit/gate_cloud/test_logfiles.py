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

"""What a service logged after a mark: the gate's phases read a log from
the size it had before they acted."""

from gate_cloud import logfiles


def test_only_what_was_written_after_the_mark_is_read(tmp_path):
    log = tmp_path / 'nova-scheduler-app.log'
    # A byte count, not a character count: the line before holds a
    # character of three bytes.
    log.write_text('before \u2026 the restart\n', encoding='utf-8')
    mark = logfiles.size(log)
    assert mark == len('before \u2026 the restart\n'.encode('utf-8'))
    with open(log, 'a', encoding='utf-8') as f:
        f.write('image-type-filter request filters added\n')
    assert logfiles.read_from(log, mark) == (
        'image-type-filter request filters added\n')
    assert logfiles.read_from(log, 0).startswith('before \u2026')


def test_a_log_not_written_yet_is_empty(tmp_path):
    missing = tmp_path / 'not-yet.log'
    assert logfiles.size(missing) == 0
    assert logfiles.read_from(missing, 0) == ''
