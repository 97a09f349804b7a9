"""Tempest plugin for image-type-filter (its own distribution)."""
