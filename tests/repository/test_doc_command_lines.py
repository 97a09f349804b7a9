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

"""Every command line of this project's that README and the docs give is
one that runs: parsed by the command's own parser (cliff's, as the console
script builds it) and checked by its ``check_arguments`` where it has one
(what the command refuses before it reads anything), so a line an
operator pastes is never a usage error.

What is a command line: in a console block (``$``/``#`` prompts) or a
README code block, every command that runs ``image-type-filter``,
``virt-capabilities`` or ``openstack image-type`` (behind ``sudo``,
``docker exec NAME``, a path or ``VAR=value``); in running text, an
inline literal of one of these commands (or of a subcommand alone, such as
``candidates --disk-format raw``) that gives an option a value. A literal
that only names a command or an option (``report --check``,
``candidates --server``) is a reference, not a line to run. A placeholder
value (``NAME``, ``<uuid>``) stands for a valid one.
"""

import contextlib
import glob
import io
import os
import re
import shlex

import pytest

from image_type_common import exceptions
from image_type_common.cli import app as cli_app
from image_type_filter.cmd import main as itf_main
from tests import helpers
from virt_capabilities.cmd import main as vc_main

REPO = helpers.REPO
#: Program -> (description, command entry-point namespace).
PROGRAMS = {
    'virt-capabilities': (vc_main.DESCRIPTION, 'virt_capabilities.commands'),
    'image-type-filter': (itf_main.DESCRIPTION, 'image_type_filter.commands'),
    'openstack': ('the openstack client', 'openstack.image_type.v1'),
}
#: A subcommand named alone in running text, and its program.
SUBCOMMANDS = {'report': 'virt-capabilities', 'remove': 'virt-capabilities',
               'show': 'virt-capabilities', 'candidates': 'image-type-filter',
               'status': 'image-type-filter', 'demo': 'image-type-filter'}
PLACEHOLDER = re.compile(r'^(<[^>]+>|[A-Z][A-Z0-9_]*)$')
CONSOLE_BLOCK = re.compile(
    r'^( *)\.\. code-block:: (?:console|bash|shell|sh|none)\n'
    r'(?:\1 +:.*\n)*\n((?:(?:\1 +.*)?\n)+)', re.M)
FENCED_BLOCK = re.compile(r'^```[a-z]*\n(.*?)^```', re.M | re.S)
PROMPT = re.compile(r'^[$#] ')
#: docker exec's options that take a value (the container comes after).
DOCKER_VALUE_OPTIONS = ('-u', '--user', '-w', '--workdir', '-e', '--env',
                        '--env-file')


def pages():
    return [os.path.join(REPO, 'README.md')] + sorted(glob.glob(
        os.path.join(REPO, 'doc', 'source', '**', '*.rst'), recursive=True))


def _joined(lines, first):
    """(line number, line) of ``lines`` (the first one numbered
    ``first``), their ``\\`` continuations joined."""
    joined, pending, start = [], '', None
    for number, line in enumerate(lines, first):
        start = number if start is None else start
        if line.rstrip().endswith('\\'):
            pending += line.rstrip()[:-1] + ' '
            continue
        joined.append((start, pending + line))
        pending, start = '', None
    return joined


def block_lines(page, text):
    """(line number, text) of the shell lines of ``page``'s code blocks:
    after a prompt in an rst console block, every line of a README one."""
    found = []
    if page.endswith('.md'):
        for match in FENCED_BLOCK.finditer(text):
            first = text[:match.start(1)].count('\n') + 1
            found += _joined(match.group(1).splitlines(), first)
        return found
    for match in CONSOLE_BLOCK.finditer(text + '\n'):
        first = text[:match.start(2)].count('\n') + 1
        for number, line in _joined(match.group(2).splitlines(), first):
            line = line.strip()
            if PROMPT.match(line):
                found.append((number, PROMPT.sub('', line)))
    return found


def inline_literals(page, text):
    """(line number, text) of the inline literals of running text."""
    pattern = (r'(?<!`)``([^`]+?)``(?!`)' if page.endswith('.rst')
               else r'(?<!`)`([^`\n]+?)`(?!`)')
    text = re.sub(CONSOLE_BLOCK, '', text + '\n')
    return [(text[:m.start()].count('\n') + 1, ' '.join(m.group(1).split()))
            for m in re.finditer(pattern, text)]


def commands(words):
    """The argv of each of our commands in a shell line's words."""
    found, current = [], []
    for word in words + [';']:
        if word in ('&&', '||', ';', '|'):
            if current:
                found.append(current)
            current = []
        else:
            current.append(word)
    argvs = []
    for argv in found:
        while argv and re.match(r'^[A-Za-z_][A-Za-z0-9_]*=', argv[0]):
            argv = argv[1:]
        if argv[:1] == ['sudo']:
            argv = argv[1:]
        if argv[:2] == ['docker', 'exec']:
            argv = argv[2:]
            while argv and argv[0].startswith('-'):
                argv = argv[2 if argv[0] in DOCKER_VALUE_OPTIONS else 1:]
            argv = argv[1:]  # the container
        if not argv or os.path.basename(argv[0]) not in PROGRAMS:
            continue
        argv = [os.path.basename(argv[0])] + argv[1:]
        if argv[0] == 'openstack' and 'image-type' not in argv:
            continue  # the openstack client's own commands
        argvs.append(argv)
    return argvs


def split(line):
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return []


class Refused(Exception):
    """The line is not one that runs: argparse's or the command's
    message."""


def command_for(argv):
    """(command, its parser, its arguments) of a program's argv; Refused
    when it names no command of the program."""
    program, words = argv[0], argv[1:]
    description, namespace = PROGRAMS[program]
    application = cli_app.App(program, description, namespace)
    if program == 'openstack':
        words = words[words.index('image-type'):] if 'image-type' in words \
            else []
    else:
        _, words = application.parser.parse_known_args(words)
    try:
        factory, name, arguments = application.command_manager.find_command(
            words)
    except ValueError as exc:
        raise Refused(str(exc)) from exc
    command = factory(application, None)
    return command, command.get_parser('%s %s' % (program, name)), arguments


def _action(parser, word):
    option = word.split('=', 1)[0]
    return parser._option_string_actions.get(option)


def gives_a_value(parser, arguments):
    """Whether some option of ``arguments`` takes a value and is given
    one."""
    for i, word in enumerate(arguments):
        after = arguments[i + 1] if i + 1 < len(arguments) else None
        action = _action(parser, word) if word.startswith('-') else None
        if action is not None and action.nargs != 0 and (
                '=' in word or (after is not None
                                and not after.startswith('-'))):
            return True
    return False


def with_placeholders_filled(parser, arguments):
    """A placeholder value of an option with choices or a type stands for
    a valid one."""
    filled = list(arguments)
    for i, word in enumerate(arguments[1:], 1):
        action = _action(parser, arguments[i - 1])
        if action is None or not PLACEHOLDER.match(word):
            continue
        if action.choices:
            filled[i] = str(list(action.choices)[0])
        elif action.type is not None:
            filled[i] = '1'
    return filled


def check(command, parser, arguments):
    """Parse as the command does, then its own checks; Refused if not."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parsed = parser.parse_args(
                with_placeholders_filled(parser, arguments))
    except SystemExit as exc:
        raise Refused(err.getvalue().strip().splitlines()[-1]) from exc
    check_arguments = getattr(command, 'check_arguments', None)
    if check_arguments is not None:
        try:
            check_arguments(parsed)
        except exceptions.ConfigError as exc:
            raise Refused(str(exc)) from exc


def documented_command_lines():
    """(where, argv, from running text) of every command line found."""
    found = []
    for path in pages():
        page = os.path.relpath(path, REPO)
        with open(path) as f:
            text = f.read()
        for number, line in block_lines(page, text):
            for argv in commands(split(line)):
                found.append(('%s:%d' % (page, number), argv, False))
        for number, literal in inline_literals(page, text):
            words = split(literal)
            if words and words[0] in SUBCOMMANDS:
                words = [SUBCOMMANDS[words[0]]] + words
            for argv in commands(words):
                if len(argv) > 1:
                    found.append(('%s:%d' % (page, number), argv, True))
    return found


def test_every_documented_command_line_is_one_that_runs():
    refused, checked = [], 0
    for where, argv, in_text in documented_command_lines():
        try:
            try:
                command, parser, arguments = command_for(argv)
            except Refused:
                if in_text:
                    continue  # prose that starts with a program's name
                raise
            if in_text and not gives_a_value(parser, arguments):
                continue  # a reference to a command or an option
            check(command, parser, arguments)
        except Refused as exc:
            refused.append('%s: %s: %s' % (where, ' '.join(argv), exc))
        checked += 1
    assert not refused, '\n'.join(refused)
    # The console blocks of the install guides, the README's service line,
    # and the running text's full command lines are all among them.
    assert checked >= 20, checked


@pytest.mark.parametrize('line,refusal', [
    ('image-type-filter candidates --image-property hw_disk_bus=scsi '
     '--explain', 'give --server, --image, --flavor or --disk-format'),
    ('image-type-filter candidates --server s1 --image i1',
     '--server reads its own image and flavor'),
    ('virt-capabilities report --interval 1 --dry-run',
     'do not go together'),
    ('image-type-filter status --family no-such-family', 'invalid choice'),
    ('virt-capabilities report --no-such-option', 'unrecognized arguments'),
    ('image-type-filter no-such-command', 'Unknown command'),
])
def test_a_line_that_would_not_run_is_refused(line, refusal):
    """The check itself: what argparse refuses and what the command
    refuses before it reads anything."""
    [argv] = commands(split(line))
    with pytest.raises(Refused, match=re.escape(refusal)):
        check(*command_for(argv))


def test_shell_lines_are_found_behind_what_runs_them():
    line = ('IMAGE_TYPE_FILTER_DEMO_DATABASE_URL=x '
            '.venv/bin/image-type-filter demo && sudo docker exec -it -u '
            'nova vc virt-capabilities show -f json # offline; '
            'openstack server list')
    assert commands(split(line)) == [
        ['image-type-filter', 'demo'],
        ['virt-capabilities', 'show', '-f', 'json']]
