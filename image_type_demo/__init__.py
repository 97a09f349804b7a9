"""The demo: a mixed fleet reported into an embedded Placement by the real
reporter, then asked for hosts by the real request filters.

The only package that uses both halves; it registers the ``demo`` command
of ``image-type-filter`` through an entry point, so the scheduler side
never imports it.
"""
