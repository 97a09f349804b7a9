"""Benchmarks at scale: Placement on PostgreSQL with several API workers.

``python -m benchmarks.scale`` (see benchmarks/README.md).
"""
