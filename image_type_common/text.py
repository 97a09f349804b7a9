"""Rendering messages and untrusted values for one-line errors and logs."""


def one_line(value):
    """``value`` as text on one line: whitespace runs folded to one space."""
    return ' '.join(str(value).split())


def safe_repr(value, limit=64):
    """A log-safe, bounded rendering of untrusted input (no newlines, NULs)."""
    rendered = repr(value)
    return rendered if len(rendered) <= limit else rendered[:limit] + '...'
