# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""A real nova-scheduler choosing among a fleet: ``python3 -m
benchmarks.fleet run`` (as root).

A devstack cloud in the gate's kind of systemd container (``gate.py``, the
one module that calls ``gate_cloud``) with hundreds to thousands of
compute nodes served by a few nova-computes running a scale driver
(``scale_driver.py``, copied into devstack's nova tree), hosts that differ
as a real fleet does (``shape.py``); the same workload booted in each
scheduling mode (``modes.py``, ``workload.py``), timed from the services'
own logs (``schedlog.py``), every landing judged (``verdict.py``), the
reporters counted (``reporters.py``), and the figures written as JSON and a
plot (``figures.py``). ``run.py`` puts the steps in order; ``node.py`` is
what runs inside the container. Stdlib only on the host side, like
``gate_cloud``; doc/source/contributor/fleet-benchmark.rst says what each
figure is.
"""
