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

"""Reading a request: an unset field is None, and so is one Nova's object
does not have at all (``nova.compat`` says that one at start-up)."""

import logging

from image_type_filter.scheduler import spec_fields


class NovaLike:
    """Shaped like an oslo versioned object: declared ``fields``, and
    attributes that raise when they are not set."""

    fields = {'image': None, 'is_bfv': None}

    def __init__(self, **values):
        self._values = values

    def obj_attr_is_set(self, name):
        return name in self._values

    def __getattr__(self, name):
        try:
            return self.__dict__['_values'][name]
        except KeyError:
            raise NotImplementedError('Cannot load %r' % name) from None


class RenamedSpec(NovaLike):
    """A Nova that renamed ``is_bfv``."""

    fields = {'image': None, 'is_volume_backed': None}


def test_an_unset_field_is_none_without_a_word(caplog):
    with caplog.at_level(logging.DEBUG, spec_fields.__name__):
        assert spec_fields.field(NovaLike(), 'is_bfv') is None
        assert spec_fields.field(NovaLike(is_bfv=True), 'is_bfv') is True
    assert caplog.records == []


def test_a_field_nova_does_not_have_is_none(caplog):
    """Said once, at start-up (``nova.compat``: test_nova_runtime), not on
    every request."""
    with caplog.at_level(logging.DEBUG, spec_fields.__name__):
        assert spec_fields.field(RenamedSpec(is_volume_backed=True),
                                 'is_bfv') is None
    assert caplog.records == []


def test_an_image_property_nova_drops_is_none_without_a_word(caplog):
    class Props(NovaLike):
        fields = {'hw_architecture': None}

    with caplog.at_level(logging.DEBUG, spec_fields.__name__):
        assert spec_fields.field(Props(), 'architecture') is None
        assert spec_fields.field(
            Props(hw_architecture='x86_64'), 'hw_architecture') == 'x86_64'
        assert spec_fields.field({'trove': 'true'},
                                          'trove') == 'true'
    assert caplog.records == []
