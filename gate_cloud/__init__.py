"""A small real OpenStack cloud on this machine, for the gate job (issue 28).

``python3 -m gate_cloud run|up|down``. Stdlib only, so it runs from a bare
``python3``; the cloud's own services run from ``<repo>/.venv-cloud``. Not
part of the project's wheel (``setup.cfg`` lists its packages explicitly).
"""
