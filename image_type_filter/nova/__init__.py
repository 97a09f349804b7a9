"""Running inside an unmodified nova-scheduler, configured from nova.conf.

Nova imports host-filter classes from every name in ``[filter_scheduler]
available_filters``; a name that is a function is called and must return
classes. Naming ``image_type_filter.nova.all_filters`` there is the whole
installation: it registers this project's options on Nova's CONF, adds its
request filters to the ones nova-scheduler runs before every allocation-
candidate query, and returns ``ImageTypeRebuildFilter``, a host filter that
checks a rebuild's new image (Nova runs no request filter on a rebuild).

This package imports Nova; nothing else in the project does.
"""

from image_type_filter.nova import host_filter
from image_type_filter.nova import integration


def all_filters():
    """For ``[filter_scheduler] available_filters`` (see the module doc)."""
    integration.install()
    return [host_filter.ImageTypeRebuildFilter]
