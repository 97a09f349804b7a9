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

"""This project's RequestSpec: what one boot request asks of Placement.

Shaped like Nova's where the filters read it (``.image.disk_format``,
``.image.properties``, ``.flavor.extra_specs``, ``.is_bfv``,
``.root_required``), so the same filters work on Nova's own objects.
"""

import dataclasses

from image_type_common import exceptions
from image_type_common import text
from image_type_common import trait_names
from image_type_filter.scheduler import trait_grammar


def image_required_traits(properties):
    """The traits an image's properties require, exactly as Nova reads
    them (``trait_grammar``): Nova adds them to every boot of the image,
    filters on or off. A name Placement could not take is a ConfigError."""
    traits = trait_grammar.image_required_traits(properties)
    for trait in sorted(traits):
        if not trait_names.is_name(trait):
            raise exceptions.ConfigError(
                'image property %s names no valid trait'
                % text.safe_repr(trait_grammar.IMAGE_PREFIX + trait))
    return traits


@dataclasses.dataclass
class ImageMeta:
    disk_format: str = None
    properties: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Flavor:
    extra_specs: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class RequestSpec:
    image: ImageMeta = None
    flavor: Flavor = dataclasses.field(default_factory=Flavor)
    is_bfv: bool = False
    resources: dict = dataclasses.field(default_factory=dict)
    required: set = dataclasses.field(default_factory=set)
    forbidden: set = dataclasses.field(default_factory=set)
    root_required: set = dataclasses.field(default_factory=set)
    root_forbidden: set = dataclasses.field(default_factory=set)

    @classmethod
    def for_boot(cls, disk_format=None, resources=None, is_bfv=False,
                 properties=None, extra_specs=None, **kwargs):
        """A boot request as Nova builds it: the image's
        ``trait:X=required`` properties are required traits."""
        kwargs.setdefault('required', set())
        kwargs['required'] = set(kwargs['required']) | \
            image_required_traits(properties)
        return cls(image=ImageMeta(disk_format, dict(properties or {})),
                   flavor=Flavor(dict(extra_specs or {})), is_bfv=is_bfv,
                   resources=dict(resources or {}), **kwargs)
