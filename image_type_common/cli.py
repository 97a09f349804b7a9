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

"""The cliff application both console scripts share.

Gives every command ``-f table|json|value|yaml``, ``--debug`` (tracebacks and
debug logs), one-line errors on stderr, and the project's exit codes: 0 ok,
1 runtime failure, 2 bad configuration or usage.
"""

from importlib import metadata
import logging
import signal
import sys

from cliff import app
from cliff import columns
from cliff import commandmanager
import yaml

from image_type_common import connection
from image_type_common import control as control_mod
from image_type_common import exceptions
from image_type_common.conf import loading

LOG = logging.getLogger(__name__)
OWN_LOGGERS = ('virt_capabilities', 'image_type_filter')
#: Libraries whose warnings repeat what our one error line says (each
#: retry, urllib3's connection chain): shown from -v -v or --debug on.
CHATTY_LOGGERS = ('keystoneauth', 'keystoneauth1', 'urllib3', 'openstack')


class TextList(list):
    """A list that is text where text is wanted (``-f value``, ``shell``,
    ``csv``: comma-separated) and a list where a list is (``json``,
    ``yaml``)."""

    def __str__(self):
        return ', '.join(str(v) for v in self)


class TextDict(dict):
    """A mapping that is one line of text where text is wanted (``key:
    value; ...``, or ``text`` when given) and an object in json or yaml."""

    def __init__(self, mapping=(), text=None):
        super().__init__(mapping)
        self._text = text

    def __str__(self):
        if self._text is not None:
            return self._text
        return '; '.join('%s: %s' % kv for kv in self.items())


yaml.SafeDumper.add_representer(TextList,
                                yaml.representer.SafeRepresenter.represent_list)
yaml.SafeDumper.add_representer(TextDict,
                                yaml.representer.SafeRepresenter.represent_dict)


class ListColumn(columns.FormattableColumn):
    """A list: comma-separated text in a table, value, shell or csv; a list
    in json or yaml. Never a Python repr."""

    def human_readable(self):
        return ', '.join(str(v) for v in self._value) or '-'

    def machine_readable(self):
        return TextList(self._value)


class DataColumn(columns.FormattableColumn):
    """A TextDict, TextList or None: its text in a table, value, shell or
    csv ('-' for nothing); the data itself in json or yaml."""

    def human_readable(self):
        return '-' if self._value is None else str(self._value) or '-'

    def machine_readable(self):
        return self._value


class App(app.App):
    """A cliff App with the project's logging, errors and exit codes."""

    def __init__(self, name, description, namespace, control=None):
        self.NAME = name
        self.LOG = logging.getLogger(name)
        self._error = None
        #: How a signal reaches a running command (``control.install``).
        self.control = control or control_mod.Control()
        super().__init__(description=description,
                         version=metadata.version('image-type-filter'),
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
        debug = self.options.debug
        root.setLevel(logging.DEBUG if debug else logging.WARNING)
        own = (logging.DEBUG if debug or self.options.verbose_level > 1 else
               logging.INFO if self.options.verbose_level == 1 else
               logging.WARNING)
        for name in OWN_LOGGERS + (self.NAME,):
            logging.getLogger(name).setLevel(own)
        logging.getLogger(self.NAME).setLevel(logging.INFO)
        quiet_libraries(self.options)
        # stevedore warns of a plugin it cannot load; our error says it too.
        logging.getLogger('stevedore').setLevel(
            logging.DEBUG if debug else logging.ERROR)

    def build_option_parser(self, description, version, argparse_kwargs=None):
        # "usage: image-type-filter", also when run as python -m ...main.
        return super().build_option_parser(
            description, version,
            dict(argparse_kwargs or {}, prog=self.NAME))

    def run(self, argv):
        if not argv:
            # As --help: usage, description and the command list; but a
            # command was expected, so exit 2.
            try:
                super().run(['--help'])
            except SystemExit:
                pass
            return 2
        return super().run(argv)

    def clean_up(self, cmd, result, err):
        self._error = err

    def run_subcommand(self, argv):
        self._error = None
        result = super().run_subcommand(argv)
        if isinstance(self._error, exceptions.Error):
            return self._error.exit_code
        return result


def quiet_libraries(options):
    """keystoneauth1's retry warnings and urllib3's chains only from
    ``-v -v`` or ``--debug`` on: by default a failure is our one line."""
    level = (logging.DEBUG if getattr(options, 'debug', False) else
             logging.WARNING if getattr(options, 'verbose_level', 1) > 1
             else logging.ERROR)
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(level)


class AnswersWithExitCode:
    """Mixin for a cliff command whose exit code is part of its answer.

    ``take_action`` sets ``self.exit_code`` (a readiness check that prints
    its table and answers 2); one of this project's errors becomes its own
    exit code and one line. Both hold under any cliff App, the
    ``openstack`` client's included; with ``--debug`` errors propagate for
    the traceback.
    """

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


def add_config_argument(parser):
    parser.add_argument(
        '--config-file', action='append', default=[], metavar='PATH',
        help='nova.conf to read (repeatable, later files win). Its '
             '[placement] section is used to reach Placement.')
    parser.add_argument(
        '--config-dir', action='append', default=[], metavar='DIR',
        help='A nova.conf.d directory: the .conf files in it are read in name '
             'order after the --config-file ones, as nova-compute reads '
             'split files such as nova-compute.conf (repeatable).')


def add_cloud_argument(parser):
    parser.add_argument(
        '--os-cloud', metavar='NAME',
        help='Reach Placement through openstacksdk with this clouds.yaml '
             'entry instead of nova.conf\'s [placement] section (an ironic '
             'node\'s reporter: Ironic, instead of [ironic]). Without '
             'either, OS_* environment variables are used.')


def client_from_args(parsed_args, register):
    """Load the config files (with ``register``'s options) and build a
    Placement client from them."""
    conf = loading.load(parsed_args.config_file, register,
                        config_dirs=parsed_args.config_dir)
    return conf, connection.client_for(conf, parsed_args.os_cloud)


def main_for(name, description, namespace, argv=None):
    """Entry point body: exit code from the App; SIGTERM or SIGINT unwinds
    the command wherever it is (``with`` blocks clean up) and exits
    128 + the signal, unless the command handles the stop itself (the
    reporter's service and ``demo --serve`` end with 0)."""
    argv = sys.argv[1:] if argv is None else argv
    application = App(name, description, namespace)
    control_mod.install(application.control)
    try:
        with application.control.interruptible():
            return application.run(argv)
    except control_mod.Interrupted:
        # A stop (SIGTERM, SIGINT), or a SIGHUP no command was waiting for.
        return 128 + (application.control.stop_signal or signal.SIGHUP)
