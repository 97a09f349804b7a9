"""This project's RequestSpec: what one boot request asks of Placement.

Shaped like Nova's where the filters read it (``.image.disk_format``,
``.image.properties``, ``.flavor.extra_specs``, ``.is_bfv``,
``.root_required``), so the same filters work on Nova's own objects.
"""

import dataclasses


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
        return cls(image=ImageMeta(disk_format, dict(properties or {})),
                   flavor=Flavor(dict(extra_specs or {})), is_bfv=is_bfv,
                   resources=dict(resources or {}), **kwargs)
