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

"""The one check every trait name passes before it reaches Placement or a
query: the whole value, not a prefix of it."""

import pytest

from image_type_common import trait_names


@pytest.mark.parametrize('check,name', [
    (trait_names.is_name, 'HW_CPU_X86_AVX2'),
    (trait_names.is_name, 'CUSTOM_TROVE'),
    (trait_names.is_custom, 'CUSTOM_TROVE'),
])
def test_a_well_formed_name_passes(check, name):
    assert check(name)


@pytest.mark.parametrize('check', [trait_names.is_name,
                                   trait_names.is_custom])
@pytest.mark.parametrize('name', ['CUSTOM_TROVE\n', 'CUSTOM_TROVE\nX',
                                  '\nCUSTOM_TROVE', 'CUSTOM_trove',
                                  'CUSTOM_TROVE ', '', 'CUSTOM_' + 'X' * 249])
def test_a_name_with_anything_around_it_fails(check, name):
    # '$' alone would match before a trailing newline.
    assert not check(name)


def test_a_standard_name_is_not_custom():
    assert not trait_names.is_custom('HW_CPU_X86_AVX2')
