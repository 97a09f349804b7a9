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

"""The WSGI application each gunicorn worker of the embedded server loads.

Placement reads ``$OS_PLACEMENT_CONFIG_DIR/placement.conf``; the server
sets that and the access log's path in the workers' environment. A worker
loads it after gunicorn forks it, so this is also where a worker asks to
die with its master: a worker orphaned by a killed master would otherwise
wait up to half its timeout to notice.
"""

import os
import signal

from placement.wsgi import api

from placement_runner import access_log
from placement_runner import lifetime

lifetime.die_with_parent(signal.SIGKILL, now=True)

application = access_log.logged(api.application,
                                os.environ[access_log.ENVIRON_KEY])
