"""Request filters: Nova-shaped ``(ctxt, request_spec) -> bool`` callables.

A filter returns True when it added a constraint to the request. Filters are
built from a conf (``Filter(conf)``) and found through the
``image_type_filter.request_filters`` entry-point namespace, so third-party
filters plug in beside this one without patching the scheduler.
"""

import logging
import time

from stevedore import named

from image_type_common import exceptions as vc_exceptions
from image_type_common import image_types
from image_type_filter import conf as itf_conf
from image_type_filter import exceptions
from image_type_filter.conf import scheduler as scheduler_conf

LOG = logging.getLogger(__name__)
NAMESPACE = 'image_type_filter.request_filters'


def safe_repr(value, limit=64):
    """A log-safe, bounded rendering of untrusted input (no newlines, NULs)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'


class WarnOnce:
    """Remembers what it warned about, up to a bound (input is untrusted)."""

    def __init__(self, limit=256):
        self.limit = limit
        self.seen = set()

    def first_time(self, key):
        if key in self.seen:
            return False
        if len(self.seen) < self.limit:
            self.seen.add(key)
        return True


class RequireImageTypeSupport:
    """Require the trait of the image's ``disk_format`` on the root provider.

    Off unless ``[scheduler] filter_hosts_by_image_type_support``. Does
    nothing for volume-backed requests (the image is not the root disk) or
    requests without an image. The trait comes from the catalogue, never
    from the string, so any ``disk_format`` yields one known trait or none.
    """

    name = 'require_image_type_support'

    def __init__(self, conf):
        self.conf = conf
        self._unknown = WarnOnce()

    def __call__(self, ctxt, request_spec):
        if not self.conf.scheduler.filter_hosts_by_image_type_support:
            return False
        trait = self.required_trait(request_spec)
        if trait is None:
            return False
        request_spec.root_required.add(trait)
        return True

    def required_trait(self, request_spec):
        """The trait a host needs to boot the request's image, or None.

        None when the image does not constrain the host: volume-backed, no
        image, or an unknown format under ``ignore``. Under ``reject`` an
        unknown format raises UnknownImageFormat.
        """
        if getattr(request_spec, 'is_bfv', False):
            return None
        image = getattr(request_spec, 'image', None)
        if image is None:
            return None
        disk_format = getattr(image, 'disk_format', None)
        trait = image_types.trait_for_format(disk_format)
        if trait is None:
            self._unknown_format(disk_format)
        return trait

    def _unknown_format(self, disk_format):
        if (self.conf.scheduler.image_type_unknown_format
                == scheduler_conf.REJECT):
            raise exceptions.UnknownImageFormat(
                'image disk_format %s is not a known image type; known: %s'
                % (safe_repr(disk_format), ', '.join(image_types.FORMATS)))
        key = disk_format if isinstance(disk_format, str) else repr(
            disk_format)
        if self._unknown.first_time(key[:64]):
            LOG.warning('image disk_format %s maps to no known '
                        'COMPUTE_IMAGE_TYPE_* trait; not filtering hosts by '
                        'image type (is os-traits up to date?)',
                        safe_repr(disk_format))


_default_filter = None


def require_image_type_support(ctxt, request_spec):
    """Nova's request-filter signature, reading this package's ``CONF``."""
    global _default_filter
    if _default_filter is None:
        _default_filter = RequireImageTypeSupport(itf_conf.CONF)
    return _default_filter(ctxt, request_spec)


def _constraints(spec):
    return {name: set(getattr(spec, name, ()) or ())
            for name in ('root_required', 'root_forbidden', 'required',
                         'forbidden')}


class RequestFilterPipeline:
    """Runs the enabled request filters in order."""

    def __init__(self, filters):
        self.filters = list(filters)

    @classmethod
    def from_conf(cls, conf, names=None):
        names = list(names if names is not None
                     else conf.scheduler.enabled_request_filters)
        missing = []
        manager = named.NamedExtensionManager(
            NAMESPACE, names, invoke_on_load=True, invoke_args=(conf,),
            name_order=True,
            on_missing_entrypoints_callback=missing.extend)
        if missing:
            raise vc_exceptions.ConfigError(
                '[scheduler] enabled_request_filters: unknown filter(s) %s; '
                'available: %s' % (', '.join(sorted(missing)), ', '.join(
                    sorted(ep.name for ep in manager.list_entry_points()))))
        return cls((ext.name, ext.obj) for ext in manager.extensions)

    def describe_trait(self, trait):
        """Which filter rule asks for ``trait``, for explanations, or None."""
        for _, request_filter in self.filters:
            describe = getattr(request_filter, 'describe_trait', None)
            text = describe(trait) if describe else None
            if text:
                return text
        return None

    def __call__(self, ctxt, request_spec):
        """Run every filter; return the names of those that added something."""
        added = []
        debug = LOG.isEnabledFor(logging.DEBUG)
        for name, request_filter in self.filters:
            before = _constraints(request_spec) if debug else None
            start = time.perf_counter()
            if request_filter(ctxt, request_spec):
                added.append(name)
            if debug:
                after = _constraints(request_spec)
                LOG.debug('request filter %s took %.1f us, added %s', name,
                          (time.perf_counter() - start) * 1e6,
                          {k: sorted(after[k] - before[k]) for k in after
                           if after[k] - before[k]} or 'nothing')
        return added
