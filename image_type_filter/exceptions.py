"""Errors of the scheduler side."""

from image_type_common import exceptions


class NoValidHost(exceptions.Error):
    """The request cannot be placed; the message says why."""


class UnknownImageFormat(NoValidHost):
    """``image_type_unknown_format = reject`` and the format is not known."""
