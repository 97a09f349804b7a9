"""Options of the scheduler side, registered on an explicit ConfigOpts.

``CONF`` is this package's own ConfigOpts (not oslo's global), used by the
Nova-signature module-level filter functions; everything else takes a conf.
"""

from oslo_config import cfg

from image_type_filter.conf import image_isolation
from image_type_filter.conf import scheduler
from virt_capabilities.conf import placement

MODULES = [scheduler, image_isolation, placement]


def register_opts(conf):
    for module in MODULES:
        module.register_opts(conf)


def list_opts():
    """Entry point for oslo-config-generator (``oslo.config.opts``)."""
    merged = {}
    for module in MODULES:
        for group, opts in module.list_opts().items():
            merged.setdefault(group, []).extend(opts)
    return list(merged.items())


CONF = cfg.ConfigOpts()
register_opts(CONF)
