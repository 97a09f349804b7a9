"""This project's RequestSpec: what one boot request asks of Placement.

Shaped like Nova's where the filter reads it (``.image.disk_format``,
``.image.properties``, ``.is_bfv``, ``.root_required``), so the filters work on
Nova's own objects too.
"""

import dataclasses


@dataclasses.dataclass
class ImageMeta:
    disk_format: str = None
    properties: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class RequestGroup:
    """A suffixed request group (``resources1=...&required1=...``)."""

    resources: dict = dataclasses.field(default_factory=dict)
    required: set = dataclasses.field(default_factory=set)
    forbidden: set = dataclasses.field(default_factory=set)
    member_of: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class RequestSpec:
    image: ImageMeta = None
    is_bfv: bool = False
    resources: dict = dataclasses.field(default_factory=dict)
    required: set = dataclasses.field(default_factory=set)
    forbidden: set = dataclasses.field(default_factory=set)
    root_required: set = dataclasses.field(default_factory=set)
    root_forbidden: set = dataclasses.field(default_factory=set)
    member_of: list = dataclasses.field(default_factory=list)
    groups: dict = dataclasses.field(default_factory=dict)
    group_policy: str = None
    limit: int = None

    @classmethod
    def for_boot(cls, disk_format=None, resources=None, is_bfv=False,
                 properties=None, **kwargs):
        return cls(image=ImageMeta(disk_format, dict(properties or {})),
                   is_bfv=is_bfv, resources=dict(resources or {}), **kwargs)
