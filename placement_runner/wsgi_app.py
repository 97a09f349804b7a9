"""The WSGI application each gunicorn worker of the embedded server loads.

Placement reads ``$OS_PLACEMENT_CONFIG_DIR/placement.conf``; the server
sets that and the access log's path in the workers' environment.
"""

import os

from placement.wsgi import api

from placement_runner import access_log

application = access_log.logged(api.application,
                                os.environ[access_log.ENVIRON_KEY])
