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

"""A stand-in for the network API: only the reads Nova makes, all empty.

Nova 34's API lists ports (for security groups) on every server read, even
for ``--nic none`` servers, and answers 500 when no ``network`` endpoint
answers. This is registered in Keystone as service type ``network`` and
answers those reads with empty lists; it is not Neutron, and anything else
is 404. The gate runs it as ``python -m gate_cloud.services.network_standin
PORT``.
"""

import http.server
import json
import sys

from gate_cloud import layout
from gate_cloud import processes

NAME = 'network-standin'
PORT = 9696
PORTS = {'network-standin': PORT}
DEBIAN = ()
PYPI = ()
NEEDS = ()
URL = layout.url(PORT)
CATALOG = {'network': ('network-standin', URL)}

EMPTY = {
    '/v2.0/ports': 'ports',
    '/v2.0/networks': 'networks',
    '/v2.0/security-groups': 'security_groups',
    '/v2.0/floatingips': 'floatingips',
    '/v2.0/subnets': 'subnets',
    '/v2.0/extensions': 'extensions',
    '/v2.0/qos/policies': 'policies',
}
VERSIONS = {'versions': [{'id': 'v2.0', 'status': 'CURRENT', 'links': [
    {'rel': 'self', 'href': '/v2.0/'}]}]}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def _send(self, code, body):
        raw = json.dumps(body).encode()
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):
        path = self.path.split('?', 1)[0].rstrip('/')
        if path.endswith('.json'):
            path = path[:-5]
        if path in ('', '/v2.0'):
            return self._send(200, VERSIONS)
        if path in EMPTY:
            return self._send(200, {EMPTY[path]: []})
        return self._send(404, {'NeutronError': {
            'type': 'HTTPNotFound', 'message': 'stand-in: not served',
            'detail': ''}})


def start(cloud):
    processes.start(NAME, [cloud.bin(NAME, 'python'), '-m', __name__,
                           str(PORT)], env=cloud.env(NAME))


def wait(cloud):
    processes.wait_for(NAME, processes.http_ok(URL + '/v2.0/ports'),
                       processes.started(NAME))


def stop(cloud):
    processes.stop(NAME)


def main():
    port = int(sys.argv[1])
    server = http.server.ThreadingHTTPServer(('127.0.0.1', port), Handler)
    server.serve_forever()


if __name__ == '__main__':
    main()
