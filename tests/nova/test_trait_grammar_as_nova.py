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

"""The one trait parser against Nova's own: flavor and image, key by key.

Nova parses the flavor's extra specs in ``ResourceRequest`` (granular
groups, required and forbidden) and the image's properties in
``ImageMetaProps.from_dict`` (``trait:X=required`` only, into
``traits_required``, then the unsuffixed group). Every input below goes
through both, and the answers must be the same.
"""

import pytest

pytest.importorskip('nova')

from nova import objects  # noqa: E402
from nova.scheduler import utils as scheduler_utils  # noqa: E402

from image_type_filter.scheduler import trait_grammar  # noqa: E402

FLAVOR_SPECS = [
    {'trait:HW_CPU_X86_AVX2': 'required'},
    {'trait:CUSTOM_A': 'forbidden', 'trait1:CUSTOM_B': 'required',
     'resources1:VGPU': '1', 'group_policy': 'none'},
    {'trait_x-9:CUSTOM_C': 'required', 'resources_x-9:VGPU': '1'},
    {'trait:CUSTOM_D': 'Required', 'trait:CUSTOM_E': 'preferred'},
    {'trait%s:CUSTOM_F' % ('9' * 64): 'required',
     'resources%s:VGPU' % ('9' * 64): '1'},
    {'trait%s:CUSTOM_G' % ('9' * 65): 'required'},
    {'traits:CUSTOM_H': 'required', 'hw:cpu_policy': 'shared'},
    {'trait: CUSTOM_I': 'required'},
]

IMAGE_PROPS = [
    {'trait:CUSTOM_A': 'required'},
    {'trait:CUSTOM_A': 'forbidden', 'trait:CUSTOM_B': 'Required'},
    {'trait1:CUSTOM_C': 'required', 'trait_x:CUSTOM_D': 'required'},
    {'traits_required': 'CUSTOM_E', 'trait:CUSTOM_F': 'required',
     'trait:CUSTOM_G': 'required'},
    {'trait: CUSTOM_H': 'required'},
    {},
]


def _nova_groups(extra_specs=None, image_props=None):
    """{suffix: (required, forbidden)} from Nova's ResourceRequest."""
    objects.register_all()
    flavor = objects.Flavor(vcpus=1, memory_mb=512, root_gb=1,
                            ephemeral_gb=0, swap=0, name='f',
                            extra_specs=dict(extra_specs or {}))
    image = objects.ImageMeta.from_dict(
        {'properties': dict(image_props or {})})
    spec = objects.RequestSpec(flavor=flavor, image=image, is_bfv=False,
                               requested_resources=[])
    request = scheduler_utils.ResourceRequest.from_request_spec(spec)
    return {group.requester_id: (set(group.required_traits),
                                 set(group.forbidden_traits))
            for group in request._rg_by_id.values()}


def _our_groups(extra_specs):
    groups = {}
    for entry in trait_grammar.flavor_traits(extra_specs):
        required, forbidden = groups.setdefault(entry.group, (set(), set()))
        (required if entry.value == 'required' else forbidden).add(
            entry.name)
    return groups


@pytest.mark.parametrize('extra_specs', FLAVOR_SPECS)
def test_flavor_traits_land_in_novas_groups(extra_specs):
    nova = {k: v for k, v in _nova_groups(extra_specs).items()
            if v != (set(), set())}
    assert _our_groups(extra_specs) == nova


@pytest.mark.parametrize('props', IMAGE_PROPS)
def test_image_traits_are_novas_traits_required(props):
    objects.register_all()
    nova_props = objects.ImageMetaProps.from_dict(dict(props))
    nova = set(nova_props.traits_required) \
        if 'traits_required' in nova_props else set()
    assert trait_grammar.image_required_traits(props) == nova
    # and Nova's own object gives the same through the same function
    assert trait_grammar.image_required_traits(nova_props) == nova
    # in the unsuffixed group, never a granular one
    assert _nova_groups(image_props=props).get(None, (set(), set()))[0] \
        == nova


def _nova_image_traits(props):
    objects.register_all()
    nova_props = objects.ImageMetaProps.from_dict(dict(props))
    return set(nova_props.traits_required) \
        if 'traits_required' in nova_props else set()


@pytest.mark.parametrize('props', IMAGE_PROPS)
def test_what_we_call_ignored_asks_nova_for_nothing(props):
    ignored = {key for key, _ in trait_grammar.image_ignored_traits(props)}
    kept = {k: v for k, v in props.items() if k not in ignored}
    assert _nova_image_traits(kept) == _nova_image_traits(props)
    for key in ignored:  # and alone, it asks for nothing either
        assert _nova_image_traits({key: props[key]}) == set()
