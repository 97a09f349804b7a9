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

"""A small real OpenStack cloud on this machine, for the gate job.

``python3 -m gate_cloud run|up|down|prepare|pin``. Stdlib only, so it runs
from a bare ``python3``; the cloud's own services run from the virtualenv
of their OpenStack series, ``<repo>/.venv-cloud-<series>``, installed from
``gate_cloud/constraints/<series>.txt``. One module per service in
``gate_cloud/services/``; ``cloud.py`` walks them. Not part of the
project's wheel (``setup.cfg`` lists its packages explicitly).
"""
