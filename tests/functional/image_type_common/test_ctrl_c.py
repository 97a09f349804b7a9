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

"""A Ctrl-C at any moment ends a command without a traceback.

Each child runs with ``python -X importtime``, which prints a line as each
module finishes importing: the test sends SIGINT right after the line of a
chosen module (during the slow imports of cliff, keystoneauth1 and the
commands), or once the command is waiting on a real listener, or once the
demo is building its fleet. Synchronised on output, never on a sleep.
(Python's own start-up, before the console script's module runs, is the
interpreter's and not tested here.)
"""

import signal
import socket
import sys

import pytest

from tests import helpers

#: Modules the console scripts import after their first line has run,
#: in the order they finish (``-X importtime``).
IMPORT_MARKERS = ('cliff.app', 'keystoneauth1.session',
                  'image_type_common.cli.app')


def start(*args):
    # faulthandler: a child still running at the deadline writes every
    # thread's stack before it is killed (``Child.finish``).
    return helpers.Child([sys.executable, '-X', 'importtime',
                          '-X', 'faulthandler', '-m', *args])


def imported(module):
    """The end of the ``-X importtime`` line of ``module`` (indented by
    nesting)."""
    return ' ' + module


def assert_quiet_stop(child):
    code = child.finish()
    errors = '\n'.join(line for line in child.err.text().splitlines()
                       if not line.startswith('import time:'))
    assert code == 128 + signal.SIGINT, errors
    for text in ('Traceback', 'KeyboardInterrupt', 'Exception ignored'):
        assert text not in errors, errors


@pytest.fixture
def silent_port():
    """A loopback port that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    sock.listen(16)
    yield sock
    sock.close()


def silent_conf(tmp_path, sock):
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n'
                    'host = node-1\n[placement]\nauth_type = admin_token\n'
                    'endpoint = http://127.0.0.1:%d\ntoken = admin\n'
                    % sock.getsockname()[1])
    return str(path)


@pytest.mark.parametrize('command,module', [
    (['image_type_filter.cmd.main', 'status'], module)
    for module in IMPORT_MARKERS] + [
    (['virt_capabilities.cmd.main', 'report'], IMPORT_MARKERS[0])])
def test_ctrl_c_while_importing(tmp_path, silent_port, command, module):
    with start(*command, '--config-file',
               silent_conf(tmp_path, silent_port)) as child:
        child.err.wait_for(imported(module))
        child.send(signal.SIGINT)
        assert_quiet_stop(child)


@pytest.mark.parametrize('command', [
    ['image_type_filter.cmd.main', 'status'],
    ['image_type_filter.cmd.main', 'candidates', '--disk-format', 'raw'],
    ['virt_capabilities.cmd.main', 'report'],
])
def test_ctrl_c_while_waiting_for_placement(tmp_path, silent_port, command):
    with start(*command, '--config-file',
               silent_conf(tmp_path, silent_port)) as child:
        silent_port.settimeout(helpers.SAFETY_TIMEOUT)
        connection, _ = silent_port.accept()  # the request is on its way
        child.send(signal.SIGINT)
        assert_quiet_stop(child)
        connection.close()


@pytest.mark.parametrize('marker', [imported('image_type_common.cli.app'),
                                    imported('placement_runner.embedded'),
                                    'traits added'])
def test_ctrl_c_in_the_first_moments_of_the_demo(marker):
    # -v -v: the fleet's reporters log as they report ("traits added").
    with start('image_type_filter.cmd.main', '-v', '-v', 'demo') as child:
        child.err.wait_for(marker)
        child.send(signal.SIGINT)
        assert_quiet_stop(child)
