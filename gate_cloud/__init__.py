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

"""The gate jobs on upstream devstack and grenade, in a systemd container.

``python3 -m gate_cloud devstack|grenade run``: ``container.py`` makes and
boots the container, ``sources.py`` the services' sources from the package
index, ``localconf.py`` local.conf from ``.zuul.yaml``'s jobs,
``devstack_job.py`` and ``grenade_job.py`` run them, and the
``devstack_*`` phases run on the node. Stdlib only (and the node's
python3-yaml), so it runs from a bare ``python3``. Not part of the
project's wheel (``setup.cfg`` lists its packages explicitly).
"""


class GateError(Exception):
    """One line naming what failed: the command prints it and exits 1."""
