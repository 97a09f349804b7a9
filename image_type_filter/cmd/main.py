"""``image-type-filter``: the operator's view of image-type scheduling."""

import sys

from image_type_common import startup

DESCRIPTION = """\
See which hosts can boot which image formats, why a boot found no host, and
whether the cloud is ready for [scheduler] filter_hosts_by_image_type_support.

Exit codes: 0 ok; 1 runtime failure; 2 bad configuration or usage. status
answers like nova-status upgrade check: 0 ready, 1 warnings, 2 not ready,
255 could not check.
"""


def main(argv=None):
    startup.quiet_until_ready()
    from image_type_common import cli  # the slow imports, after that
    return cli.main_for('image-type-filter', DESCRIPTION,
                        'image_type_filter.commands', argv)


if __name__ == '__main__':
    sys.exit(main())
