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

"""The WSGI entry gunicorn loads: trims ``sys.argv``, then imports the app.

Keystone, Placement, Glance and nova-api parse ``sys.argv`` through
oslo.config when imported; under gunicorn that is gunicorn's own command
line, and the workers exit in a loop with nothing in the service log. The
real application is named by ``GATE_WSGI_APP`` (``module:attribute``).
"""

import importlib
import os
import sys

sys.argv = sys.argv[:1]
_module, _attribute = os.environ['GATE_WSGI_APP'].split(':')
application = getattr(importlib.import_module(_module), _attribute)
if callable(application) and _attribute.startswith('initialize'):
    application = application()
