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

"""What every service's steps are handed: ``Cloud``.

The credentials the cloud was made with, the series each service runs from
(and so the virtualenv its programs come from), the ordered list of
services, and an admin client once Keystone answers. Kept in
``.cloud/credentials.json`` and ``.cloud/series.json``, so ``down`` and the
test phases in another process see the same cloud.
"""

import json
import secrets

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import rest
from gate_cloud import series as series_mod
from gate_cloud.processes import GateError

CREDS = 'credentials.json'
SERIES = 'series.json'
#: The key of the clients (tempest, openstack) in the series map.
CLIENTS = 'clients'


def new_credentials():
    def pw():
        return secrets.token_urlsafe(18)
    return {'admin_password': pw(), 'service_password': pw(),
            'db_user': 'gate', 'db_password': pw(), 'rabbit_user': 'gate',
            'rabbit_password': pw(), 'erlang_cookie': secrets.token_hex(16)}


class Cloud:
    """The running (or starting) cloud, as its services see it."""

    def __init__(self, services, creds=None, series=None):
        self.services = tuple(services)
        self.creds = creds or {}
        self.series = dict(series or {})
        self._admin = None

    @classmethod
    def new(cls, services, series):
        """A new cloud: fresh credentials, every service on ``series``."""
        cloud = cls(services, new_credentials(),
                    {name: series for name in
                     [s.NAME for s in services] + [CLIENTS]})
        cloud.save()
        return cloud

    @classmethod
    def load(cls, services, missing_ok=False):
        """The cloud ``up`` made; with ``missing_ok``, an empty one when
        there is none (``down`` after a failed start)."""
        try:
            creds = json.loads(layout.path(CREDS).read_text())
            series = json.loads(layout.path(SERIES).read_text())
        except FileNotFoundError:
            if missing_ok:
                return cls(services)
            raise GateError('no cloud is up (%s missing)'
                            % layout.path(CREDS)) from None
        return cls(services, creds, series)

    def save(self):
        inifile.write(layout.path(CREDS), json.dumps(self.creds))
        inifile.write(layout.path(SERIES), json.dumps(self.series, indent=1),
                      mode=0o644)

    def service(self, name):
        for svc in self.services:
            if svc.NAME == name:
                return svc
        raise GateError('no service %r in this cloud' % name)

    def series_of(self, name):
        try:
            return self.series[name]
        except KeyError:
            raise GateError('no series recorded for %s (is the cloud up?)'
                            % name) from None

    def venv(self, name):
        return series_mod.venv(self.series_of(name))

    def bin(self, name, program):
        """A program from the virtualenv service ``name`` runs from."""
        return str(self.venv(name) / 'bin' / program)

    def env(self, name):
        return layout.env_for_services(self.venv(name))

    def venv_file(self, name, relative):
        return series_mod.venv_file(self.series_of(name), relative)

    @property
    def admin(self):
        """Keystone's admin, on the admin project (re-authenticates)."""
        if self._admin is None:
            self._admin = rest.Client('admin', self.creds['admin_password'])
        return self._admin
