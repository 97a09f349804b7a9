"""Request filters: Nova-shaped ``(ctxt, request_spec) -> bool`` callables.

A filter returns True when it added a constraint to the request, and raises
``image_type_filter.exceptions.NoValidHost`` when the request cannot be
placed. Filters are found through the ``image_type_filter.request_filters``
entry-point namespace and built as ``Filter(settings, **kwargs)``:
``settings`` is the FilterSettings read once from the configuration, and the
keyword arguments are ``conf`` (the ConfigOpts itself, for a third-party
filter's own options), ``placement`` (a PlacementClient, or None),
``catalog`` (the pipeline's one TraitCatalog over it, or None) and
``image_property_names`` (inside Nova, the image properties Nova keeps); a
filter takes what it needs and ignores the rest. Third-party filters plug in
there beside these without patching the scheduler.
"""

import logging
import time

from stevedore import named

from image_type_common import exceptions as common_exceptions
from image_type_common import image_types
from image_type_common import text
from image_type_filter import exceptions
from image_type_filter.scheduler import spec_fields
from image_type_filter.scheduler import trait_catalog

LOG = logging.getLogger(__name__)
NAMESPACE = 'image_type_filter.request_filters'


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

    Off unless ``[scheduler] filter_hosts_by_image_type_support`` (or Nova's
    ``query_placement_for_image_type_support``) is on. Does
    nothing for volume-backed requests (the image is not the root disk) or
    requests without an image. The trait comes from the catalogue, never
    from the string, so any ``disk_format`` yields one known trait or none.
    """

    name = 'require_image_type_support'

    def __init__(self, settings, placement=None, catalog=None, **_):
        self.settings = settings
        self._unknown = WarnOnce()
        self.catalog = catalog or trait_catalog.for_placement(placement,
                                                             settings)

    def __call__(self, ctxt, request_spec):
        if not self.settings.image_type_enabled:
            return False
        trait = self.required_trait(request_spec)
        if trait is None:
            return False
        self._fail_if_no_host_boots(trait)
        if trait in request_spec.root_required:
            return False  # Nova's own filter added it
        request_spec.root_required.add(trait)
        return True

    def _fail_if_no_host_boots(self, trait):
        """NoValidHost naming the format when no compute host carries its
        trait (from the catalogue's cached answer: no request per boot)."""
        if self.catalog is None or self.catalog.carried(trait) is not False:
            return
        carried = self.catalog.carried_traits() or set()
        boots = sorted(image_types.FORMAT_BY_TRAIT[t] for t in carried
                       if t in image_types.FORMAT_BY_TRAIT)
        raise exceptions.NoValidHost(
            'No compute host boots %s images (%s); this cloud boots %s.'
            % (image_types.FORMAT_BY_TRAIT[trait], trait,
               ', '.join(boots) or 'no image format at all'))

    def required_trait(self, request_spec):
        """The trait a host needs to boot the request's image, or None.

        None when the image does not constrain the host: volume-backed, no
        image, or an unknown format under ``ignore``. Under ``reject`` an
        unknown format raises UnknownImageFormat.
        """
        if spec_fields.field(request_spec, 'is_bfv'):
            return None
        image = spec_fields.field(request_spec, 'image')
        if image is None:
            return None
        disk_format = spec_fields.field(image, 'disk_format')
        trait = image_types.trait_for_format(disk_format)
        if trait is None:
            self._unknown_format(disk_format)
        return trait

    def _unknown_format(self, disk_format):
        if self.settings.rejects_unknown_format:
            raise exceptions.UnknownImageFormat(
                'image disk_format %s is not a known image type; known: %s'
                % (text.safe_repr(disk_format),
                   ', '.join(image_types.FORMATS)))
        key = disk_format if isinstance(disk_format, str) else repr(
            disk_format)
        if self._unknown.first_time(key[:64]):
            LOG.warning('image disk_format %s maps to no known '
                        'COMPUTE_IMAGE_TYPE_* trait; not filtering hosts by '
                        'image type (is os-traits up to date?)',
                        text.safe_repr(disk_format))


def _raise_load_failure(manager, entry_point, exc):
    raise exc


def _constraints(spec):
    return {name: set(getattr(spec, name, ()) or ())
            for name in ('root_required', 'root_forbidden', 'required',
                         'forbidden')}


class RequestFilterPipeline:
    """Runs the enabled request filters in order."""

    def __init__(self, filters):
        self.filters = list(filters)

    @classmethod
    def from_settings(cls, settings, **filter_kwargs):
        """The filters ``[scheduler] enabled_request_filters`` names.

        A filter that refuses its configuration stops the load with its own
        error (a ConfigError naming the option), whether it is enabled or
        not; an unknown name is a ConfigError listing the known ones.
        """
        names = list(settings.enabled_request_filters)
        # One catalogue for every filter: one cached read, not one each.
        filter_kwargs.setdefault('catalog', trait_catalog.for_placement(
            filter_kwargs.get('placement'), settings))
        missing = []
        manager = named.NamedExtensionManager(
            NAMESPACE, names, invoke_on_load=True, invoke_args=(settings,),
            invoke_kwds=filter_kwargs, name_order=True,
            on_load_failure_callback=_raise_load_failure,
            on_missing_entrypoints_callback=missing.extend)
        if missing:
            raise common_exceptions.ConfigError(
                '[scheduler] enabled_request_filters: unknown filter(s) %s; '
                'available: %s' % (', '.join(sorted(missing)), ', '.join(
                    sorted(ep.name for ep in manager.list_entry_points()))))
        return cls((ext.name, ext.obj) for ext in manager.extensions)

    def describe_trait(self, trait, request_spec=None):
        """Which filter rule asks for ``trait`` (in ``request_spec``, when
        given), for explanations, or None."""
        for _, request_filter in self.filters:
            describe = getattr(request_filter, 'describe_trait', None)
            text = describe(trait, request_spec) if describe else None
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
