"""Benchmarks on a real embedded Placement: ``python -m benchmarks --help``."""
