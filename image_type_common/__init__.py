"""Plumbing both halves share: Placement client, auth, errors, catalogue.

The compute-side reporter (``virt_capabilities``) and the scheduler side
(``image_type_filter``) both build on this package; it imports neither, so
the scheduler never loads compute-side code through it.
"""
