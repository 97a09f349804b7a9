"""This project's own scheduler client: the request filters, then
``GET /allocation_candidates``, outside Nova.

Used by the operator CLI, the demo and the benchmarks. nova-scheduler never
loads it: inside Nova, Nova builds the query itself.
"""
