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

"""The cliff application both console scripts run: cliff's output formats,
the logging options (``OPTION_HELP``), one-line errors on stderr and the
exit codes of ``exceptions``."""

import contextlib
from importlib import metadata
import logging

from cliff import app
from cliff import commandmanager

from image_type_common import control as control_mod
from image_type_common import exceptions
from image_type_common import library_logs
from image_type_common import startup
from image_type_common.cli import column_types

#: The global options' help, as configure_logging applies them (cliff's
#: own words, "Increase verbosity of output. Can be repeated.", do not say
#: what each gives here).
OPTION_HELP = {
    '--verbose': "Also show this project's DEBUG lines (the Keystone tokens "
                 'it obtains and renews, the Placement microversion, a '
                 'failure repeated cycle after cycle) and the warnings of '
                 'keystoneauth1, urllib3 and openstacksdk; once is enough '
                 '(-v -v shows the same).',
    '--quiet': 'Show only warnings and errors.',
    '--log-file': 'Also write the lines shown on stderr to this file.',
    '--debug': 'Show tracebacks on errors, and the DEBUG lines of this '
               'project and of every library.'}


def version():
    """This installation's version, as pbr wrote it into the package's
    metadata at build time (from git: one per commit until a tag)."""
    return metadata.version(startup.DISTRIBUTION)


class App(app.App):
    """A cliff App with the project's logging, errors and exit codes."""

    def __init__(self, name, description, namespace):
        self.NAME = name
        self.LOG = logging.getLogger(name)
        self._error = None
        #: How a signal reaches a running command (``control.install``).
        self.control = control_mod.Control()
        column_types.register_yaml()
        super().__init__(description=description,
                         version=version(),
                         command_manager=commandmanager.CommandManager(
                             namespace),
                         deferred_help=True)

    def configure_logging(self):
        """INFO from our own code by default, WARNING from libraries."""
        root = logging.getLogger()
        for handler in list(root.handlers):
            root.removeHandler(handler)
        console = logging.StreamHandler(self.stderr)
        console.setFormatter(logging.Formatter(
            '%(levelname)s %(name)s: %(message)s'))
        root.addHandler(console)
        if self.options.log_file:
            try:
                log_file = logging.FileHandler(self.options.log_file)
            except OSError as exc:
                # cliff logs it (one line) and exits; run() makes it 2.
                self._error = exceptions.ConfigError(
                    '--log-file %s: %s' % (self.options.log_file,
                                           exc.strerror or exc))
                raise self._error from exc
            log_file.setFormatter(logging.Formatter(
                '%(asctime)s %(levelname)s %(name)s: %(message)s'))
            root.addHandler(log_file)
        debug = self.options.debug
        root.setLevel(logging.DEBUG if debug else logging.WARNING)
        own = (logging.DEBUG if debug or self.options.verbose_level > 1 else
               logging.INFO if self.options.verbose_level == 1 else
               logging.WARNING)
        for name in startup.OURS:
            logging.getLogger(name).setLevel(own)
        logging.getLogger(self.NAME).setLevel(logging.INFO)
        library_logs.quiet_libraries(self.options)
        # stevedore warns of a plugin it cannot load; our error says it too.
        logging.getLogger('stevedore').setLevel(
            logging.DEBUG if debug else logging.ERROR)

    def build_option_parser(self, description, version, argparse_kwargs=None):
        # "usage: image-type-filter", also when run as python -m ...main.
        parser = super().build_option_parser(
            description, version,
            dict(argparse_kwargs or {}, prog=self.NAME))
        for action in parser._actions:
            for option in action.option_strings:
                action.help = OPTION_HELP.get(option, action.help)
        return parser

    def run(self, argv):
        if not argv:
            # As --help: usage, description and the command list; but a
            # command was expected, so exit 2.
            with contextlib.suppress(SystemExit):
                super().run(['--help'])
            return 2
        self._error = None
        code = super().run(argv)
        if isinstance(self._error, exceptions.Error):
            return self._error.exit_code
        return code

    def clean_up(self, cmd, result, err):
        # Read by run(), which runs the command (run_subcommand).
        self._error = err


class AnswersWithExitCode:
    """Mixin for a cliff command whose exit code is part of its answer
    (``self.exit_code``), and whose errors are one line and their own code
    under any cliff App, the ``openstack`` client's included (``--debug``:
    the traceback)."""

    exit_code = 0

    def run(self, parsed_args):
        self.exit_code = 0
        try:
            result = super().run(parsed_args)
        except exceptions.Error as exc:
            if getattr(self.app.options, 'debug', False):
                raise
            self.app.LOG.error('%s', exc)
            return exc.exit_code
        return result or self.exit_code

