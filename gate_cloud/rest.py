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

"""A tiny OpenStack REST client on urllib (stdlib): tokens, JSON, timeouts."""

import json
import time
import urllib.error
import urllib.request

from gate_cloud.processes import GateError

TIMEOUT = 30.0
#: Seconds a token is used before a new one is asked for: half Keystone's
#: default ``[token] expiration`` (3600 s, devstack's too).
TOKEN_RENEW = 1800


class Client:
    """Password auth against Keystone, scoped to ``project``; re-auths on
    401."""

    def __init__(self, username, password, project, auth_url):
        self.username, self.password = username, password
        self.project, self.auth_url = project, auth_url
        self.token = None
        self.token_at = 0.0

    def authenticate(self):
        body = {'auth': {
            'identity': {'methods': ['password'], 'password': {'user': {
                'name': self.username, 'domain': {'name': 'Default'},
                'password': self.password}}},
            'scope': {'project': {'name': self.project,
                                  'domain': {'name': 'Default'}}}}}
        status, headers, _ = self._raw('POST', self.auth_url + '/auth/tokens',
                                       body, token=None)
        self.token = headers['X-Subject-Token']
        self.token_at = time.monotonic()

    def _raw(self, method, url, body=None, token=None, headers=None,
             timeout=TIMEOUT):
        data = None
        hdrs = {'Accept': 'application/json'}
        if body is not None:
            data = json.dumps(body).encode()
            hdrs['Content-Type'] = 'application/json'
        if token:
            hdrs['X-Auth-Token'] = token
        hdrs.update(headers or {})
        # Only the cloud's own http://127.0.0.1 endpoints are called.
        req = urllib.request.Request(url, data=data,  # noqa: S310
                                     method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(  # noqa: S310
                    req, timeout=timeout) as resp:
                raw = resp.read()
                return resp.status, resp.headers, (
                    json.loads(raw) if raw.strip() else None)
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            raise HTTPError(method, url, exc.code, raw.decode(
                'utf-8', 'replace')[:300]) from None
        except OSError as exc:
            raise GateError('%s %s: %s' % (method, url, exc)) from None

    def valid_token(self):
        """A token well inside its lifetime (a new one when the last is
        past ``TOKEN_RENEW``)."""
        if self.token is None or \
                time.monotonic() - self.token_at > TOKEN_RENEW:
            self.authenticate()
        return self.token

    def call(self, method, url, body=None, headers=None, timeout=TIMEOUT):
        return self.call_full(method, url, body, headers, timeout)[2]

    def call_full(self, method, url, body=None, headers=None,
                  timeout=TIMEOUT):
        """(status, response headers, body) of one request."""
        self.valid_token()
        try:
            return self._raw(method, url, body, self.token, headers,
                             timeout)
        except HTTPError as exc:
            if exc.code != 401:
                raise
            self.authenticate()
            return self._raw(method, url, body, self.token, headers,
                             timeout)

    def get(self, url, **kw):
        return self.call('GET', url, **kw)

    def post(self, url, body=None, **kw):
        return self.call('POST', url, body, **kw)

    def put(self, url, body=None, **kw):
        return self.call('PUT', url, body, **kw)

    def delete(self, url, **kw):
        return self.call('DELETE', url, **kw)


class HTTPError(GateError):
    def __init__(self, method, url, code, text):
        super().__init__('%s %s answered %d: %s' % (method, url, code, text))
        self.code = code


PLACEMENT_HEADERS = {'OpenStack-API-Version': 'placement 1.39'}
COMPUTE_HEADERS = {'OpenStack-API-Version': 'compute 2.90',
                   'X-OpenStack-Nova-API-Version': '2.90'}
