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

"""``image-type-filter``: the operator's view of image-type scheduling."""

import sys

from image_type_common import startup

DESCRIPTION = """\
See which hosts can boot which image formats, why a boot found no host, and
whether the cloud is ready for [scheduler] filter_hosts_by_image_type_support.

Exit codes: 0 ok; 1 runtime failure; 2 bad configuration, credentials or
usage; candidates also 3, no valid host (the reason on stderr). status
answers like nova-status upgrade check: 0 ready, 1 warnings, 2 not ready
(or bad configuration, credentials or usage), 255 could not check
(Placement or Keystone unreachable or failing).
"""


def main(argv=None):
    return startup.run_console_script(
        'image-type-filter', DESCRIPTION, 'image_type_filter.commands', argv)


if __name__ == '__main__':
    sys.exit(main())
