"""Scheduler side: ask Placement only for hosts that can boot the image."""
