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

"""candidates --server where Nova is installed: Nova loaded from the
nova.conf given, then what fails is one line.

The command in a fresh interpreter, as an operator runs it on the
scheduler's host, with real listeners on 127.0.0.1, as
tests/functional/image_type_common/test_error_lines.py: a Keystone that is
not there, and an endpoint that is not Nova's (the admin token plugin
sends every service to one URL, here a real Placement).
"""

import subprocess
import sys

import pytest

pytest.importorskip('nova')

from tests.functional.image_type_common import test_error_lines as error_lines  # noqa: E402,E501
from tests.helpers import clean_env  # noqa: E402

LOADED = '''
import sys
from image_type_filter.diagnostics.nova_side import as_scheduler
from image_type_filter.nova import integration
as_scheduler.load_nova([sys.argv[1]])
print(','.join(f.__name__ for f in integration.installed_filters()))
'''


CELL = '''
import sys
from image_type_filter.diagnostics.nova_side import as_scheduler
from nova import context
from nova import objects
ctxt = as_scheduler.load_nova([sys.argv[1]])
cell = objects.CellMapping(
    uuid='6f2a4c0e-3b1d-4e5f-9a8b-7c6d5e4f3a2b', name='cell1',
    database_connection='sqlite://',
    transport_url='rabbit://{username}:{password}@{hostname}/')
with context.target_cell(ctxt, cell) as cctxt:
    print(cell.format_mq_url(cell.transport_url),
          cctxt.mq_connection is not None)
'''


def test_a_cell_is_reached_as_nova_scheduler_reaches_it(tmp_path):
    """This project's request filters reach every cell as Nova's own do
    (``context.target_cell``): Nova formats the cell mapping's broker URL
    with [DEFAULT] transport_url (a devstack cell's mapping is such a
    template) and makes the cell's RPC transport from it, so load_nova
    registers oslo.messaging's options as nova-scheduler's RPC set-up
    does. No broker is contacted: Nova connects on first use."""
    conf = tmp_path / 'nova.conf'
    conf.write_text('[DEFAULT]\ntransport_url = '
                    'rabbit://stackrabbit:secret@10.0.0.1:5672/\n')
    proc = subprocess.run([sys.executable, '-c', CELL, str(conf)],
                          capture_output=True, text=True, env=clean_env(),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-2:] == [
        'rabbit://stackrabbit:secret@10.0.0.1/', 'True']


MOVED = '''
import sys
from image_type_common import exceptions
from image_type_filter.diagnostics.nova_side import as_scheduler
from nova.image import glance
del glance._translate_from_glance
try:
    as_scheduler.load_nova([sys.argv[1]])
except exceptions.ConfigError as exc:
    print(exc)
'''


def test_a_nova_without_a_name_the_command_uses_is_one_line(tmp_path):
    """compat.WHEN_CHANGED's rule for the candidates part: a Nova release
    that dropped a name ``as_scheduler`` uses (here the private Glance
    translation) is refused before anything runs, in one line naming it
    and the release."""
    conf = tmp_path / 'nova.conf'
    conf.write_text('[DEFAULT]\n')
    proc = subprocess.run([sys.executable, '-c', MOVED, str(conf)],
                          capture_output=True, text=True, env=clean_env(),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stdout.splitlines()
    assert 'missing nova.image.glance._translate_from_glance' in line
    assert line.startswith('--server, --image and --flavor run Nova')


#: A loopback port nothing listens on.
closed_port = error_lines.closed_port


def test_nova_loads_this_projects_filters_as_nova_scheduler_does(
        sqlite_placement, tmp_path):
    """nova.conf's available_filters names them: load_nova adds them to
    Nova's request filters, as nova-scheduler's host manager does."""
    conf = tmp_path / 'nova.conf'
    conf.write_text(sqlite_placement.nova_conf_section() + (
        '\n[filter_scheduler]\n'
        'available_filters = nova.scheduler.filters.all_filters\n'
        'available_filters = image_type_filter.nova.all_filters\n'
        'enabled_filters = ComputeFilter,ImageTypeRebuildFilter\n'))
    proc = subprocess.run([sys.executable, '-c', LOADED, str(conf)],
                          capture_output=True, text=True, env=clean_env(),
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ['image_type_filter.request_filters']


def test_keystone_down_is_one_line_naming_keystone(sqlite_placement,
                                                   tmp_path, closed_port):
    """Placement through nova.conf's [placement]; Nova and Glance through
    OS_*, whose Keystone is not there."""
    conf = tmp_path / 'nova.conf'
    conf.write_text(sqlite_placement.nova_conf_section())
    auth_url = 'http://127.0.0.1:%d/v3' % closed_port
    env = clean_env(OS_AUTH_URL=auth_url, OS_USERNAME='admin',
                    OS_PASSWORD='s3cret', OS_PROJECT_NAME='admin',
                    OS_USER_DOMAIN_NAME='Default',
                    OS_PROJECT_DOMAIN_NAME='Default')
    proc = error_lines.itf('candidates', '--config-file', str(conf),
                           '--server', 'vm-1', env=env)
    assert proc.returncode == 1, proc.stderr
    error_lines.assert_one_line(proc, 'cannot reach Keystone at %s'
                                % auth_url)
    assert 's3cret' not in proc.stderr


def test_an_endpoint_that_is_not_novas_is_one_line(sqlite_placement,
                                                   tmp_path):
    conf = tmp_path / 'nova.conf'
    conf.write_text(sqlite_placement.nova_conf_section())
    server = sqlite_placement
    env = clean_env(OS_AUTH_TYPE='admin_token', OS_ENDPOINT=server.endpoint,
                    OS_TOKEN=server.token)
    proc = error_lines.itf('candidates', '--config-file', str(conf),
                           '--server', 'vm-1', env=env)
    assert proc.returncode == 1, proc.stderr
    error_lines.assert_one_line(proc, 'does not answer as Nova',
                                server.endpoint)
