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

"""The command line's logging: how loud this project's packages (each one
setup.cfg ships) are at each verbosity, and --log-file."""

import configparser
import contextlib
import io
import logging
import os

import pytest

from image_type_common.cli import app as cli_app
from tests import helpers

REPO = helpers.REPO


def product_packages():
    """The top-level packages of the product's wheel, from setup.cfg."""
    setup = configparser.ConfigParser()
    setup.read(os.path.join(REPO, 'setup.cfg'))
    return sorted({name.strip().split('.')[0] for name in setup[
        'options.packages.find']['include'].split() if name.strip()})


@pytest.fixture
def logging_restored():
    """configure_logging sets the process's loggers: put them back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    names = product_packages() + ['image-type-filter']
    levels = {name: logging.getLogger(name).level for name in names}
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        if handler not in handlers:
            handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    for name, value in levels.items():
        logging.getLogger(name).setLevel(value)


def configured(*argv):
    """An App with its logging configured from ``argv``: (app, stderr)."""
    application = cli_app.App('image-type-filter', 'test',
                              'image_type_filter.commands')
    application.stderr = io.StringIO()
    application.options, _ = application.parser.parse_known_args(list(argv))
    application.configure_logging()
    return application, application.stderr


@pytest.mark.parametrize('argv,level', [
    ((), logging.INFO),
    (('-v',), logging.DEBUG),
    (('-v', '-v'), logging.DEBUG),
    (('-q',), logging.WARNING),
    (('--debug',), logging.DEBUG),
])
def test_every_package_of_ours_follows_the_verbosity(logging_restored, argv,
                                                     level):
    configured(*argv)
    assert product_packages() == ['image_type_common', 'image_type_filter',
                                  'virt_capabilities']
    for package in product_packages():
        assert logging.getLogger(package + '.any').getEffectiveLevel() == (
            level), package


def test_keystone_token_lines_show_from_v(logging_restored):
    """image_type_common's DEBUG lines (connection.TokenLines') with -v,
    not without."""
    for argv, shown in (((), False), (('-v',), True), (('-v', '-v'), True)):
        _, stderr = configured(*argv)
        logging.getLogger('image_type_common.connection').debug(
            'Keystone token renewed')
        assert ('DEBUG image_type_common.connection: Keystone token renewed'
                in stderr.getvalue()) is shown, argv


def test_log_file_gets_the_lines_stderr_gets(logging_restored, tmp_path):
    path = tmp_path / 'cli.log'
    _, stderr = configured('--log-file', str(path))
    logging.getLogger('virt_capabilities.service').info('sync done: 1')
    logging.getLogger('image_type_common.connection').debug('not shown')
    assert stderr.getvalue() == (
        'INFO virt_capabilities.service: sync done: 1\n')
    lines = path.read_text().splitlines()
    assert len(lines) == 1
    assert lines[0].endswith(' INFO virt_capabilities.service: sync done: 1')


def test_a_log_file_that_cannot_be_opened_is_exit_2_and_one_line(
        logging_restored, tmp_path):
    application = cli_app.App('image-type-filter', 'test',
                              'image_type_filter.commands')
    out, err = io.StringIO(), io.StringIO()
    application.stdout, application.stderr = out, err
    missing = tmp_path / 'no-such-dir' / 'cli.log'
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = application.run(['--log-file', str(missing), 'status'])
    assert code == 2
    assert err.getvalue() == (
        'ERROR image-type-filter: --log-file %s: No such file or directory\n'
        % missing)


def test_the_help_says_what_each_level_shows():
    help_text = cli_app.App('image-type-filter', 'test',
                            'image_type_filter.commands').parser.format_help()
    flat = ' '.join(help_text.split())
    assert "Also show this project's DEBUG lines" in flat
    assert 'Can be repeated' not in flat  # cliff's words, not true here
    assert 'Disabled by default' not in flat
