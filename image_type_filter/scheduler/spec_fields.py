"""Read a request the same way whether it is this project's or Nova's.

Nova's objects raise on a name they do not have and on a field that is not
set; a filter that reads untrusted requests must never raise, so every read
goes through ``field``.
"""

import collections.abc


def field(container, name):
    """``name`` of a dict or an object (Nova's included), or None."""
    try:
        if container is None:
            return None
        if isinstance(container, collections.abc.Mapping):
            return container.get(name)
        fields = getattr(container, 'fields', None)
        if isinstance(fields, collections.abc.Mapping):
            if name not in fields or not container.obj_attr_is_set(name):
                return None
        return getattr(container, name, None)
    except Exception:  # noqa: BLE001 - untrusted input must never raise
        return None


def image_properties(request_spec):
    """The image's properties: a dict, Nova's ImageMetaProps, or None."""
    return field(field(request_spec, 'image'), 'properties')


def extra_specs(request_spec):
    """The flavor's extra specs (a dict), or None."""
    return field(field(request_spec, 'flavor'), 'extra_specs')
