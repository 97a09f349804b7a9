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

"""How loud the libraries under our commands may be.

keystoneauth1 warns on every retry and urllib3 names every failed
connection: by default a failure is our one line, theirs show from ``-v``.
Standard library only (option registration imports it).
"""

import logging

#: Libraries whose warnings repeat what our one error line says (each
#: retry, urllib3's connection chain): shown from -v or --debug on.
CHATTY_LOGGERS = ('keystoneauth', 'keystoneauth1', 'urllib3', 'openstack')


def quiet_libraries(options):
    """Set the chatty libraries' level from a cliff App's ``options``."""
    level = (logging.DEBUG if getattr(options, 'debug', False) else
             logging.WARNING if getattr(options, 'verbose_level', 1) > 1
             else logging.ERROR)
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(level)
