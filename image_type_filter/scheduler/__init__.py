"""What nova-scheduler runs: the request filters and the rebuild check.

Nova-free and imported on every boot: it reads only ``image_type_common``
and this side's settings, never the reporter, the client, the CLI or the
runner (tests/unit/test_layout.py).
"""
