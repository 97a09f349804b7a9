"""Errors of the scheduler side."""

from image_type_common import exceptions


class NoValidHost(exceptions.Error):
    """The request cannot be placed; the message says why.

    Exit code 3, as ``image-type-filter candidates`` answers "no valid
    host"; inside Nova it becomes ``RequestFilterFailed``.
    """

    exit_code = 3


class UnknownImageFormat(NoValidHost):
    """``[image_type_filter] unknown_format = reject``, unknown format."""
