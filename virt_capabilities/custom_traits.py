"""Validation of ``[virt_capabilities] custom_traits``."""

import re

from virt_capabilities import conf as vc_conf
from virt_capabilities import exceptions

# Placement's own rule for custom trait names (and its 255-character limit).
CUSTOM_TRAIT = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
MAX_LENGTH = 255


def from_conf(conf):
    names = vc_conf.read(conf, 'custom_traits', 'virt_capabilities')
    bad = sorted(n for n in names
                 if not CUSTOM_TRAIT.match(n) or len(n) > MAX_LENGTH)
    if bad:
        raise exceptions.ConfigError(
            '[virt_capabilities] custom_traits: %s not a valid custom trait '
            '(must match CUSTOM_[A-Z0-9_]+, at most %d characters)'
            % (', '.join(repr(b) for b in bad), MAX_LENGTH))
    return frozenset(names)
