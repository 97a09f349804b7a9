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

A stop before the commands are ready ends the process at once, quietly.
Importing the commands (cliff, keystoneauth1, oslo.config, openstacksdk)
takes most of a second; Python's own SIGINT handler would print a
KeyboardInterrupt traceback from whichever import it lands in. Until
``cli.app.main_for`` installs the real handlers (``control.install``),
SIGINT and SIGTERM end the process with 128 + the signal, as they end it
later.

This module imports nothing heavy, so the console scripts import it before
anything else.
"""

import os
import signal

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_console_script(name, description, namespace, argv=None):
    """A console script's body: quiet until ready, then the cliff App of
    ``namespace``'s commands."""
    quiet_until_ready()
    from image_type_common.cli import app  # the slow imports, after that
    return app.main_for(name, description, namespace, argv)


def quiet_until_ready():
    for signum in STOP_SIGNALS:
        signal.signal(signum, _exit_now)


def _exit_now(signum, frame):
    # Nothing has been started or written yet: nothing to unwind.
    os._exit(128 + signum)
