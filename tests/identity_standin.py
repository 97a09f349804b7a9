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

"""A Keystone-shaped HTTPS endpoint on 127.0.0.1, for the TLS and
least-privilege tests.

A real Keystone (keystone from the package index, its database, fernet
keys and bootstrap) would add about thirty packages to the test extra and
tens of seconds to each module; the gate cloud runs the real one. This
stand-in answers only what the two real clients of Keystone in these tests
ask: keystoneauth1 in our commands (version discovery, a password token
scoped to a project, with its catalogue) and keystonemiddleware in the
real Placement (its own token, then ``GET /v3/auth/tokens`` to validate a
caller's token and learn its roles). Placement's policy, and the roles it
checks, are the real ones: the stand-in only says which roles a user has,
as Keystone's role assignments would (no implied roles: a ``service``
user has ``service`` only).
"""

import dataclasses
import datetime
import http.server
import json
import ssl
import threading
import uuid

DOMAIN = {'id': 'default', 'name': 'Default'}
REGION = 'RegionOne'
#: Keystone's default token lifetime ([token] expiration).
TOKEN_LIFETIME = 3600


@dataclasses.dataclass
class User:
    name: str
    password: str
    project: str
    roles: tuple
    #: Seconds its tokens last; None: the stand-in's ``token_lifetime``.
    token_lifetime: int = None
    id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)


def _when(seconds):
    moment = (datetime.datetime.now(datetime.timezone.utc)
              + datetime.timedelta(seconds=seconds))
    return moment.strftime('%Y-%m-%dT%H:%M:%S.000000Z')


class IdentityStandIn:
    """HTTPS on 127.0.0.1 with ``certfile``/``keyfile``; users added with
    ``add_user``; ``placement_url`` is what the catalogue lists.

    ``token_lifetime``: seconds a token it issues is valid for.
    ``discovery_status``: what ``GET /v3`` answers (200, or 401 to stand
    for an endpoint that is not Keystone's).
    """

    def __init__(self, certfile, keyfile, token_lifetime=TOKEN_LIFETIME,
                 discovery_status=200):
        self.users = {}
        self.tokens = {}
        #: ``METHOD path`` of every request, in order; a token request
        #: also names the user: ``POST /v3/auth/tokens USER``.
        self.requests = []
        self.placement_url = None
        self.token_lifetime = token_lifetime
        self.discovery_status = discovery_status
        self._lock = threading.Lock()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certfile, keyfile)
        self._server = _Server(('127.0.0.1', 0), _handler(self), context)
        self.url = 'https://127.0.0.1:%d' % self._server.server_port
        self.auth_url = self.url + '/v3'
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True)
        self._thread.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def stop(self):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(60)

    def add_user(self, name, password, project='service', roles=('service',),
                 token_lifetime=None):
        self.users[name] = User(name, password, project, tuple(roles),
                                token_lifetime)
        return self.users[name]

    def token_requests(self, user=None):
        """How many tokens were asked for (by ``user``)."""
        with self._lock:
            return sum(1 for r in self.requests
                       if r.startswith('POST /v3/auth/tokens ')
                       and (user is None or r.split()[-1] == user))

    # -- documents --------------------------------------------------------

    def version(self):
        return {'id': 'v3.14', 'status': 'stable',
                'updated': '2020-04-07T00:00:00Z',
                'links': [{'rel': 'self', 'href': self.url + '/v3/'}],
                'media-types': [{
                    'base': 'application/json',
                    'type': 'application/vnd.openstack.identity-v3+json'}]}

    def catalog(self):
        def service(kind, url):
            return {'id': kind, 'type': kind, 'name': kind, 'endpoints': [
                {'id': '%s-%s' % (kind, interface), 'interface': interface,
                 'region': REGION, 'region_id': REGION, 'url': url}
                for interface in ('public', 'internal', 'admin')]}
        found = [service('identity', self.url)]
        if self.placement_url:
            found.append(service('placement', self.placement_url))
        return found

    def issue(self, body):
        """A token for a password auth request, or None."""
        try:
            auth = body['auth']
            password = auth['identity']['password']['user']
            project = auth['scope']['project']['name']
        except (KeyError, TypeError):
            return None, None
        user = self.users.get(password.get('name'))
        if (user is None or user.password != password.get('password')
                or user.project != project):
            return None, password.get('name')
        token_id = uuid.uuid4().hex
        token = {
            'methods': ['password'], 'audit_ids': [token_id[:22]],
            'issued_at': _when(0),
            'expires_at': _when(user.token_lifetime or self.token_lifetime),
            'is_domain': False,
            'user': {'id': user.id, 'name': user.name, 'domain': DOMAIN,
                     'password_expires_at': None},
            'project': {'id': 'project-' + user.project,
                        'name': user.project, 'domain': DOMAIN},
            'roles': [{'id': 'role-' + r, 'name': r} for r in user.roles],
            'catalog': self.catalog()}
        with self._lock:
            self.tokens[token_id] = token
        return token_id, user.name


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, handler, context):
        self._context = context
        super().__init__(address, handler)

    def get_request(self):
        # The handshake happens in the request's own thread, on first read:
        # a client that fails it (untrusted CA) stops only itself.
        sock, address = self.socket.accept()
        return self._context.wrap_socket(
            sock, server_side=True, do_handshake_on_connect=False), address

    def handle_error(self, request, client_address):
        pass  # a client that gave up at TLS: its own test says so


def _handler(standin):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, *args):
            pass

        def _answer(self, status, body=None, headers=()):
            data = json.dumps(body).encode() if body is not None else b''
            self.send_response(status)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _record(self, extra=''):
            with standin._lock:
                standin.requests.append(
                    ('%s %s %s' % (self.command, self.path, extra)).strip())

        def do_GET(self):
            path = self.path.split('?')[0].rstrip('/')
            if path == '/v3/auth/tokens':
                self._record()
                caller = standin.tokens.get(self.headers.get('X-Auth-Token'))
                subject = standin.tokens.get(
                    self.headers.get('X-Subject-Token'))
                if caller is None:
                    return self._answer(401, {'error': {'code': 401}})
                if subject is None:
                    return self._answer(404, {'error': {'code': 404}})
                return self._answer(200, {'token': subject}, [
                    ('X-Subject-Token', self.headers['X-Subject-Token'])])
            self._record()
            if path == '/v3':
                if standin.discovery_status != 200:
                    return self._answer(standin.discovery_status)
                return self._answer(200, {'version': standin.version()})
            if path == '':
                return self._answer(300, {'versions': {
                    'values': [standin.version()]}})
            return self._answer(404, {'error': {'code': 404}})

        def do_POST(self):
            length = int(self.headers.get('Content-Length') or 0)
            try:
                body = json.loads(self.rfile.read(length) or b'{}')
            except ValueError:
                body = {}
            if self.path.split('?')[0] != '/v3/auth/tokens':
                self._record()
                return self._answer(404, {'error': {'code': 404}})
            token_id, user = standin.issue(body)
            self._record(user or '-')
            if token_id is None:
                return self._answer(401, {'error': {
                    'code': 401, 'title': 'Unauthorized',
                    'message': 'The request you have made requires '
                               'authentication.'}})
            return self._answer(201, {'token': standin.tokens[token_id]},
                                [('X-Subject-Token', token_id)])

    return Handler
