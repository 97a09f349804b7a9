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

"""``-f yaml`` for ``values.TextList`` and ``values.TextDict``.

cliff's yaml formatter calls ``yaml.safe_dump``, whose SafeDumper knows a
type only by its exact class: a list subclass would stop the output with
a RepresenterError. ``register`` teaches it ours as a plain list and
mapping. It changes PyYAML's SafeDumper for the whole process, so it is
called where a command line starts (``app.App`` and the openstack client
plugin's commands), never on import.
"""

import yaml

from image_type_common.cli import values


def register():
    """Idempotent: a second call replaces the same representers."""
    yaml.SafeDumper.add_representer(
        values.TextList, yaml.representer.SafeRepresenter.represent_list)
    yaml.SafeDumper.add_representer(
        values.TextDict, yaml.representer.SafeRepresenter.represent_dict)
