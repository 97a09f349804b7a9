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

"""Every command's --help is plain text and true; a bare command lists the
commands; without the cli extra a console script says so in one line."""

import contextlib
import io
import subprocess
import sys

import pytest

from image_type_common.cli import app as cli_app
from image_type_filter.cmd import main as itf_main
from virt_capabilities.cmd import main as vc_main

APPS = {
    'image-type-filter': (itf_main.DESCRIPTION, 'image_type_filter.commands',
                          ('candidates', 'demo', 'status')),
    'virt-capabilities': (vc_main.DESCRIPTION, 'virt_capabilities.commands',
                          ('remove', 'report', 'show')),
}
#: reStructuredText that must not reach a terminal.
RST = ('``', ':ref:`', ':doc:`', '\n.. ')


def run(name, *argv):
    """(exit code, stdout, stderr) of the App, in this process."""
    description, namespace, _ = APPS[name]
    out, err = io.StringIO(), io.StringIO()
    app = cli_app.App(name, description, namespace)
    app.stdout, app.stderr = out, err
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = app.run(list(argv))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize('name,command', [
    (name, command) for name, (_, _, commands) in APPS.items()
    for command in commands])
def test_help_is_plain_text(name, command):
    code, out, err = run(name, command, '--help')
    assert code == 0, err
    assert 'usage: %s %s' % (name, command) in out
    for markup in RST:
        assert markup not in out, out


@pytest.mark.parametrize('name', APPS)
def test_bare_command_lists_the_commands(name):
    code, out, err = run(name)
    assert code == 2
    text = out + err
    assert 'usage: %s' % name in text
    assert 'Commands:' in text
    for command in APPS[name][2]:
        assert '\n  %s ' % command in text, text
    for markup in RST:
        assert markup not in text, text


#: A console script where a library of the cli extra cannot be imported
#: (None in sys.modules makes its import fail as an absent one does).
WITHOUT = """
import sys
sys.modules[%r] = None
from %s import main
sys.exit(main.main(['--help']))
"""


@pytest.mark.parametrize('name,package', [
    ('virt-capabilities', 'virt_capabilities.cmd'),
    ('image-type-filter', 'image_type_filter.cmd')])
@pytest.mark.parametrize('library', ['cliff', 'yaml'])
def test_without_the_cli_extra_one_line_names_it(name, package, library):
    proc = subprocess.run(
        [sys.executable, '-c', WITHOUT % (library, package)],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ''
    assert proc.stderr.splitlines() == [
        '%s: the command line needs the cli extra, which is not installed '
        '(no module named %s): pip install -r dependencies-cli.txt, from '
        'image-type-filter\'s release directory' % (name, library)]


def test_a_module_of_ours_missing_is_not_called_an_extra():
    """A broken install of our own code shows its traceback."""
    proc = subprocess.run(
        [sys.executable, '-c', WITHOUT % ('image_type_common.cli.app',
                                          'virt_capabilities.cmd')],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert 'Traceback' in proc.stderr and 'cli extra' not in proc.stderr


@pytest.mark.parametrize('name,command,reaches,not_reached', [
    ('image-type-filter', 'status', ['Placement'],
     ['Nova', 'Glance', 'Ironic']),
    ('image-type-filter', 'candidates', ['Placement', 'Nova', 'Glance'],
     ['Ironic']),
    ('virt-capabilities', 'report', ['Placement', 'Ironic'],
     ['Nova', 'Glance']),
    ('virt-capabilities', 'remove', ['Placement', 'Ironic'],
     ['Nova', 'Glance']),
])
def test_os_cloud_names_every_service_the_command_reaches_with_it(
        name, command, reaches, not_reached):
    """candidates --server/--image/--flavor read Nova and Glance through
    openstacksdk (diagnostics.nova_side.cloud's APIs); an ironic node's
    reporter reaches Ironic; status only Placement."""
    code, out, err = run(name, command, '--help')
    assert code == 0, err
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith('  --os-cloud NAME'))
    end = next(i for i in range(start + 1, len(lines))
               if not lines[i].startswith('      '))
    text = ' '.join(' '.join(lines[start:end]).split())
    for service in reaches:
        assert service in text, text
    for service in not_reached:
        assert service not in text, text
