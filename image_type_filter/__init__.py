"""Scheduler-side half: ask Placement only for hosts that can boot the image."""
