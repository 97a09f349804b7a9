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

"""The cloud's services: one module each, as devstack keeps ``lib/<name>``.

``gate_cloud.cloud.SERVICES`` lists them in the order the cloud is brought
up; adding a service is a module here and an entry there. Each module
holds everything about its service:

``NAME``
    its name: in logs, process records and the series map.
``PORTS``
    ``{label: port}``, every loopback TCP port it listens on (checked free
    before anything starts).
``DEBIAN``, ``PYPI``
    the Debian packages it needs, and the distributions it runs from its
    series' virtualenv (names only: ``gate_cloud/constraints/<series>.txt``
    pins the versions).
``NEEDS``
    the services that must be up before it is set up and started.
``DATABASES``, ``USERS``, ``CATALOG`` (optional)
    the MariaDB databases made for it, its Keystone users (``{name:
    roles}``, in project ``service``) and its catalog entries (``{type:
    (name, url)}``); MariaDB's and Keystone's set-up read them from every
    service.
``configure(cloud)``, ``bootstrap(cloud)`` (optional)
    write its config files; before it starts, make its schema and whatever
    else it needs (idempotent).
``start(cloud)``, ``wait(cloud)``, ``stop(cloud)``
    start its processes (recorded by pid), wait until it answers, stop
    them; ``stop`` of a service that is not running does nothing. A
    restart (the fault phase's) is ``stop``, ``start``, ``wait``.
``populate(cloud)`` (optional)
    once it answers, what is made through it for the others (MariaDB's
    databases, Keystone's users); idempotent.
``teardown(cloud)`` (optional)
    what goes only with the whole cloud, after every ``stop``: helper
    processes kept across a restart, system files put back. Safe to run
    when nothing runs (``up`` runs it first, for a crashed cloud's leftovers).

``cloud`` is a ``gate_cloud.context.Cloud``: the credentials, the series
(and so the virtualenv) each service runs from, an admin client.
``nova.py`` is no service: what Nova's four share.
"""
