"""Compute-side half: which disk image formats a virt driver can boot.

Reads a compute node's nova.conf, works out the supported formats, and keeps
the matching ``COMPUTE_IMAGE_TYPE_*`` traits on its resource provider.
"""
