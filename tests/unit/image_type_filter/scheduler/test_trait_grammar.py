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

"""Nova's two trait grammars: the flavor's granular one, the image's.

Expected answers are Nova's rules as written in its source
(``ResourceRequest.XS_KEYPAT``, ``RequestGroup.add_trait``,
``ImageMetaProps._set_attr_from_trait_names``); tests/nova runs Nova's own
parsing on the same inputs.
"""

import pytest

from image_type_filter.scheduler import trait_grammar as grammar


def test_flavor_traits_keep_their_group_and_value():
    specs = {'trait:HW_CPU_X86_AVX2': 'required',
             'trait1:CUSTOM_A': 'forbidden',
             'trait_x-9:CUSTOM_B': 'required',
             'resources1:VGPU': '1',
             'hw:cpu_policy': 'dedicated'}
    assert [(e.group, e.name, e.value) for e in grammar.flavor_traits(specs)
            ] == [(None, 'HW_CPU_X86_AVX2', 'required'),
                  ('1', 'CUSTOM_A', 'forbidden'),
                  ('_x-9', 'CUSTOM_B', 'required')]
    assert grammar.flavor_required_traits(specs) == {'HW_CPU_X86_AVX2',
                                                     'CUSTOM_B'}


@pytest.mark.parametrize('value', ['Required', 'REQUIRED', ' required', 1,
                                   None, 'preferred'])
def test_a_flavor_trait_with_another_value_is_ignored(value):
    specs = {'trait:CUSTOM_A': value}
    assert grammar.flavor_traits(specs) == []
    assert grammar.flavor_traits({'trait:CUSTOM_A': 'required'})


def test_a_suffix_longer_than_64_is_no_trait_key():
    assert grammar.flavor_traits({'trait%s:CUSTOM_A' % ('1' * 65):
                                  'required'}) == []
    assert grammar.flavor_traits({'trait%s:CUSTOM_A' % ('1' * 64):
                                  'required'})


def test_an_image_takes_only_unsuffixed_required():
    props = {'trait:CUSTOM_A': 'required', 'trait:CUSTOM_B': 'forbidden',
             'trait1:CUSTOM_C': 'required', 'trait:CUSTOM_D': 'Required',
             'traits_required': 'CUSTOM_E', 'hw_disk_bus': 'scsi'}
    assert grammar.image_required_traits(props) == {'CUSTOM_A'}
    assert sorted(k for k, _ in grammar.image_ignored_traits(props)) == [
        'trait1:CUSTOM_C', 'trait:CUSTOM_B', 'trait:CUSTOM_D',
        'traits_required']


def test_names_are_kept_as_written():
    """Nova strips nothing: ' CUSTOM_A' is what Placement would see."""
    assert grammar.image_required_traits({'trait: CUSTOM_A': 'required'}) \
        == {' CUSTOM_A'}


@pytest.mark.parametrize('odd', [None, [], 'trait:X', {None: 'required',
                                                        7: 'required'}])
def test_odd_input_never_raises(odd):
    assert grammar.image_required_traits(odd) == set()
    assert grammar.image_ignored_traits(odd) == []
    assert grammar.flavor_traits(odd) == []
