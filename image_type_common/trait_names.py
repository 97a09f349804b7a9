"""Placement's grammar for trait (and resource-class) names, in one place.

Names are upper-case letters, digits and underscores, at most 255
characters; custom ones start with ``CUSTOM_``. Every name this project puts
into a URL or a request body is checked against this module, so nothing else
can be smuggled in.
"""

import re

MAX_LENGTH = 255
_NAME = re.compile(r'^[A-Z0-9_]+$')
_CUSTOM = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_NAME_IN_TEXT = re.compile(r'[A-Z][A-Z0-9_]+')
CUSTOM_GRAMMAR = 'CUSTOM_[A-Z0-9_]+, at most %d characters' % MAX_LENGTH


def is_name(value):
    """A well-formed trait or resource-class name, standard or custom."""
    return (isinstance(value, str) and len(value) <= MAX_LENGTH
            and bool(_NAME.match(value)))


def is_custom(value):
    """A well-formed ``CUSTOM_*`` name."""
    return (isinstance(value, str) and len(value) <= MAX_LENGTH
            and bool(_CUSTOM.match(value)))


def names_in(message):
    """The trait names mentioned in a Placement error message."""
    return _NAME_IN_TEXT.findall(message)
