"""``virt-capabilities``: what this compute node boots, kept in Placement."""

import sys

from image_type_common import startup

DESCRIPTION = """\
Report which disk image formats this compute node's virt driver can boot, as
COMPUTE_IMAGE_TYPE_* traits on its resource provider in Placement, and the
image-metadata traits (disk buses, VIF and video models, architecture) the
driver boots but nova-compute never reports.

Exit codes: 0 in sync (or shown); 1 Placement error after retries, or traits
Placement lacks; 2 bad configuration or usage.
"""


def main(argv=None):
    startup.quiet_until_ready()
    from image_type_common import cli  # the slow imports, after that
    return cli.main_for('virt-capabilities', DESCRIPTION,
                        'virt_capabilities.commands', argv)


if __name__ == '__main__':
    sys.exit(main())
