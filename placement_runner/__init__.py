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

"""A real Placement on 127.0.0.1: SQLite behind one thread, or PostgreSQL
behind gunicorn workers, started and stopped by pid.

The floor both halves are tested and demonstrated on. It imports neither
half (only ``image_type_common`` for the client it hands out).
"""

#: The distribution that installs this package (demo/pyproject.toml), and
#: its extra for PostgreSQL behind gunicorn workers, named in the errors
#: that ask for them.
DISTRIBUTION = 'image-type-filter-demo'
SCALE_EXTRA = 'scale'
