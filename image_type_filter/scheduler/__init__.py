"""The scheduler runtime: request filters and the allocation-candidate query.

What runs on every boot. It imports only ``image_type_common`` and this
package's own options, never the compute-side reporter.
"""
