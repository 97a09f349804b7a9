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

"""What a console script does first.

Importing the commands takes most of a second, and Python's SIGINT handler
would print a traceback from whichever import it lands in: until
``control.install``, SIGINT and SIGTERM end the process quietly with 128 +
the signal. Without the ``cli`` extra, one line says which to install
(exit 2). It imports nothing heavy, so it comes first.
"""

import os
import signal
import sys

from image_type_common import control
from image_type_common import exceptions

#: The distribution and its extra that install the command line (setup.cfg).
DISTRIBUTION = 'image-type-filter'
CLI_EXTRA = 'cli'
#: Our own packages: a module of theirs that is missing is a bug to show,
#: never a missing extra.
OURS = ('image_type_common', 'image_type_filter', 'virt_capabilities')


def run_console_script(name, description, namespace, argv=None):
    """A console script's body: quiet until ready, then the cliff App of
    ``namespace``'s commands, or one line if the cli extra is missing.
    Once it runs, SIGTERM or SIGINT unwinds the command wherever it is out
    of a ``control.shielded`` block, and exits 128 + the signal, unless the
    command handles the stop itself (the reporter's service and ``demo
    --serve`` end with 0)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        # Nothing has been started or written yet: nothing to unwind.
        signal.signal(signum, lambda sig, _: os._exit(128 + sig))
    try:
        from image_type_common.cli import app  # the slow imports
    except ModuleNotFoundError as exc:
        if (exc.name or '').split('.')[0] in OURS:
            raise
        # Not "pip install image-type-filter[cli]": nothing is published
        # under that name on the public package index, so pip would ask it
        # for the package too. The release directory lists the extra's
        # libraries (tools/build_release.py).
        sys.stderr.write(
            '%s: the command line needs the %s extra, which is not '
            'installed (no module named %s): pip install -r '
            'dependencies-%s.txt, from %s\'s release directory\n'
            % (name, CLI_EXTRA, exc.name, CLI_EXTRA, DISTRIBUTION))
        return exceptions.ConfigError.exit_code
    application = app.App(name, description, namespace)
    control.install(application.control)
    try:
        with application.control.interruptible():
            return application.run(sys.argv[1:] if argv is None else argv)
    except control.Interrupted:
        # A stop (SIGTERM, SIGINT), or a SIGHUP no command was waiting for.
        return 128 + (application.control.stop_signal or signal.SIGHUP)
