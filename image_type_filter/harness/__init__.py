"""The demo and test harness: a real Placement on 127.0.0.1 and a fleet
reported into it through the real reporter.

The only scheduler-side code that may import ``virt_capabilities``.
"""
