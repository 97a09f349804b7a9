# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""Placement's grammar for trait (and resource-class) names, in one place.

Upper-case letters, digits and underscores, at most 255 characters;
custom ones start ``CUSTOM_``. Every name put into a URL or a body is
checked here, so nothing else can be smuggled in.
"""

import re

MAX_LENGTH = 255
_NAME = re.compile(r'[A-Z0-9_]+')
_CUSTOM = re.compile(r'CUSTOM_[A-Z0-9_]+')
_NAME_IN_TEXT = re.compile(r'[A-Z][A-Z0-9_]+')
CUSTOM_GRAMMAR = 'CUSTOM_[A-Z0-9_]+, at most %d characters' % MAX_LENGTH


def is_name(value):
    """A well-formed trait or resource-class name, standard or custom."""
    return (isinstance(value, str) and len(value) <= MAX_LENGTH
            and bool(_NAME.fullmatch(value)))


def is_custom(value):
    """A well-formed ``CUSTOM_*`` name."""
    return is_name(value) and bool(_CUSTOM.fullmatch(value))


def names_in(message):
    """The trait names mentioned in a Placement error message."""
    return _NAME_IN_TEXT.findall(message)
