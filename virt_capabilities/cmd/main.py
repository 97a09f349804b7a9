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

"""``virt-capabilities``: what this compute node boots, kept in Placement."""

import sys

from image_type_common import startup

DESCRIPTION = """\
Keep this compute node's own traits on its resource provider in Placement:
its custom traits, the image-metadata traits (disk buses, VIF and video
models, architecture) the driver boots but nova-compute never reports, and,
where nova-compute does not report them (image_type_traits_owner =
reporter), the COMPUTE_IMAGE_TYPE_* traits of the disk image formats the
virt driver can boot. By default nova-compute keeps those itself: show says
which traits are whose on this node. remove undoes what report set.

Exit codes: 0 in sync (or shown, or removed); 1 Placement error after
retries, traits Placement lacks, or a state or status file that cannot be
saved; 2 bad configuration, credentials refused, or usage; 3 report --check
or --dry-run found a provider that differs.
"""


def main(argv=None):
    return startup.run_console_script(
        'virt-capabilities', DESCRIPTION, 'virt_capabilities.commands', argv)


if __name__ == '__main__':
    sys.exit(main())
