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

"""Reach Placement through nova-scheduler's own report client: Nova's
connection and ``[placement]`` credentials, nothing else to configure
(what is read and written, and the role: doc/source/install/scheduler.rst).
"""

from image_type_common import placement_client

VERSION_HEADER = 'OpenStack-API-Version'


class ReportClientAdapter:
    """The one keystoneauth Adapter call PlacementClient makes, sent
    through Nova's report client (``report_client_singleton``, looked up
    by ``compat``): reads, and creating a CUSTOM trait."""

    def __init__(self, report_client_singleton):
        self._report_client = report_client_singleton

    def request(self, path, method, json=None, headers=None,
                raise_exc=False):
        version = None
        value = (headers or {}).get(VERSION_HEADER, '')
        if value.startswith('placement '):
            version = value.split(' ', 1)[1]
        client = self._report_client()
        if method == 'GET' and json is None:
            return client.get(path, version=version)
        if method == 'PUT' and json is None and path.startswith(
                '/traits/CUSTOM_'):
            return client.put(path, None, version=version)
        raise NotImplementedError('only reads and PUT /traits/CUSTOM_* go '
                                  'through Nova')


def client(report_client_singleton):
    return placement_client.PlacementClient(
        ReportClientAdapter(report_client_singleton))
