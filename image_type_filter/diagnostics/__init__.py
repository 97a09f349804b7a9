"""Operator diagnostics: the fleet as Placement sees it, why a host was left
out, and whether it is safe to turn the filter on. Read-only."""
