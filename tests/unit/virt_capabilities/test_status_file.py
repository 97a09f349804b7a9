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

"""The status file monitoring reads: replaced whole or not at all, the
last success kept across failures, and a refusal of the credentials that a
service can tell from a malformed configuration."""

import json
import os
import stat

from keystoneauth1 import exceptions as ks_exc
import pytest

from image_type_common import connection
from image_type_common import exceptions
from virt_capabilities import reporter as reporter_mod
from virt_capabilities import status_file

U1 = '6a3e5a2e-1b2c-4d5e-8f90-0a1b2c3d4e5f'


def clock(*times):
    ticks = iter(times)
    return lambda: next(ticks)


def changed_report():
    return reporter_mod.SyncReport(results=[
        reporter_mod.SyncResult(U1, added=['CUSTOM_A'], removed=[]),
        reporter_mod.SyncResult('other', added=[], removed=[])])


def test_a_sync_is_recorded_and_a_failure_keeps_the_last_success(tmp_path):
    path = str(tmp_path / 'status.json')
    status_file.record(path, 'me', changed_report(), clock=clock('t1'))
    with open(path) as f:
        assert json.load(f) == {
            'format': 'virt-capabilities-status/1', 'reporter_name': 'me',
            'time': 't1', 'result': 'ok', 'error': None, 'last_ok': 't1',
            'changed': [{'provider': U1, 'added': ['CUSTOM_A'],
                         'removed': []}],
            'failed': []}
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # a new file
    # A failure (a restart's too): the last success is read back.
    status_file.record(path, 'me', error=exceptions.PlacementUnavailable(
        'cannot reach Placement at http://127.0.0.1:9: connection refused'),
        clock=clock('t3'))
    with open(path) as f:
        failed = json.load(f)
    assert failed['result'] == 'failed' and failed['last_ok'] == 't1'
    assert failed['time'] == 't3' and 'connection refused' in failed['error']


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(
        tmp_path, monkeypatch):
    path = str(tmp_path / 'status.json')
    status_file.record(path, 'me', changed_report(), clock=clock('t1'))
    before = open(path).read()

    def fsync(fd):
        raise OSError(5, 'Input/output error')

    monkeypatch.setattr(os, 'fsync', fsync)
    with pytest.raises(status_file.StatusNotSaved) as caught:
        status_file.record(path, 'me', changed_report(), clock=clock('t2'))
    monkeypatch.undo()
    assert open(path).read() == before
    assert os.listdir(tmp_path) == ['status.json']
    assert path in str(caught.value) and '\n' not in str(caught.value)


def test_no_path_no_file(tmp_path):
    status_file.record(None, 'me', changed_report())
    status_file.remove(None)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize('status', [401, 403])
def test_keystone_refusing_the_credentials_is_a_refusal_not_a_bad_file(
        status):
    """Exit 2 for a one-shot run like any configuration error, but a kind
    of its own, which the service retries (a malformed auth_url is not)."""
    refusal = {401: ks_exc.Unauthorized, 403: ks_exc.Forbidden}[status]()
    error = connection.keystone_error(refusal, 'http://127.0.0.1:5000/')
    assert isinstance(error, exceptions.CredentialsRefused)
    assert error.exit_code == 2
