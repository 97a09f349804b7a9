"""Validation of ``[virt_capabilities] custom_traits``."""

from image_type_common import exceptions
from image_type_common import trait_names
from image_type_common.conf import loading


def from_conf(conf):
    names = loading.read(conf, 'custom_traits', 'virt_capabilities')
    bad = sorted(n for n in names if not trait_names.is_custom(n))
    if bad:
        raise exceptions.ConfigError(
            '[virt_capabilities] custom_traits: %s not a valid custom trait '
            '(must match %s)' % (', '.join(repr(b) for b in bad),
                                 trait_names.CUSTOM_GRAMMAR))
    return frozenset(names)
