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
