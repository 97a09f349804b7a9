"""``virt-capabilities``: what this compute node boots, kept in Placement."""

import sys

from image_type_common import cli

DESCRIPTION = """\
Report which disk image formats this compute node's virt driver can boot, as
COMPUTE_IMAGE_TYPE_* traits on its resource provider in Placement, and the
image-metadata traits (disk buses, VIF and video models, architecture) the
driver boots but nova-compute never reports.

Exit codes: 0 in sync (or shown); 1 Placement error after retries, traits
Placement lacks, or a state file that cannot be saved; 2 bad configuration
or usage.
"""


def main(argv=None):
    return cli.main_for('virt-capabilities', DESCRIPTION,
                        'virt_capabilities.commands', argv)


if __name__ == '__main__':
    sys.exit(main())
