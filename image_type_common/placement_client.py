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

"""A thin Placement client both halves share: the only way to Placement.

Methods are named after Placement's resources and quote every path
segment; every request pins the microversion ``negotiate`` chose, once.
Errors are this project's, in one line; retries are keystoneauth1's
(``conf.keystoneauth``), a 409 the caller's.
"""

import logging
import re
from urllib import parse

from keystoneauth1 import discover
from keystoneauth1 import exceptions as ks_exc

from image_type_common import exceptions
from image_type_common import text
from image_type_common import trait_names

LOG = logging.getLogger(__name__)

#: Newest microversion this client speaks (``required=in:`` arrived in 1.39).
MAX_MICROVERSION = (1, 39)
#: What nova-scheduler of every supported Nova asks every
#: allocation-candidate query at (nova/cmd/status.py's
#: MIN_PLACEMENT_MICROVERSION, Nova 31 to 34): a Placement below it serves
#: no boot, so it is refused rather than worked around.
MIN_MICROVERSION = (1, 36)

#: The first microversion with ``in:`` (any-of) trait queries.
ANY_OF_TRAITS = (1, 39)

_NO_SUCH_TRAIT = re.compile(r'No such trait(?:\(s\))?:?\s*(.*)', re.S)


#: (1, 39) -> '1.39'.
version_str = discover.version_to_string


def quote(segment):
    """Quote one path segment so no input can reach another URL."""
    return parse.quote(str(segment), safe='')


def encode_query(params):
    """Encode (key, value) pairs deterministically; ``,`` ``:`` ``!`` kept."""
    return parse.urlencode(params, quote_via=parse.quote, safe=',:!')


class PlacementClient:
    """Talks to Placement through a keystoneauth1 Adapter (or SDK proxy)."""

    def __init__(self, adapter):
        self._adapter = adapter
        #: The microversion every request uses; None until ``negotiate``.
        self.microversion = None

    def negotiate(self):
        """Ask Placement its maximum microversion, once; return the one
        this client uses from now on."""
        if self.microversion is not None:
            return self.microversion
        resp = self._send('GET', '/', None, None)
        if resp.status_code != 200:
            raise self._error('GET', '/', resp)
        try:
            versions = resp.json().get('versions') or [{}]
            server_max = discover.normalize_version_number(
                versions[0].get('max_version') or '1.0')
        except (ValueError, AttributeError, TypeError) as exc:
            raise exceptions.PlacementError(
                'GET / did not answer with Placement\'s version '
                'document: is the endpoint Placement?') from exc
        if server_max < MIN_MICROVERSION:
            raise exceptions.PlacementTooOld(
                'Placement maximum microversion %s is older than %s, which '
                'nova-scheduler needs: upgrade Placement'
                % (version_str(server_max), version_str(MIN_MICROVERSION)))
        self.microversion = min(server_max, MAX_MICROVERSION)
        LOG.debug('Placement maximum microversion %s; using %s',
                  version_str(server_max), version_str(self.microversion))
        return self.microversion

    def _send(self, method, path, body, microversion):
        headers = {'Accept': 'application/json'}
        if microversion:
            headers['OpenStack-API-Version'] = 'placement %s' % (
                version_str(microversion))
        try:
            return self._adapter.request(path, method, json=body,
                                         headers=headers, raise_exc=False)
        except (ks_exc.EndpointNotFound, ks_exc.AuthPluginException,
                ks_exc.Unauthorized, ks_exc.Forbidden,
                ks_exc.AuthorizationFailure) as exc:
            # Retrying these cannot help: the configuration has to change.
            raise exceptions.ConfigError(
                'Placement credentials or catalogue: %s'
                % text.one_line(exc)) from exc
        except ks_exc.ClientException as exc:
            raise exceptions.PlacementUnavailable(
                'cannot reach Placement: %s' % text.one_line(exc)) from exc

    def request(self, method, path, body=None, ok=(200,), not_found=None):
        """Send at the negotiated microversion; raise unless ``ok`` (a 404
        ProviderNotFound naming ``not_found``, the path's provider)."""
        resp = self._send(method, path, body, self.negotiate())
        if resp.status_code in ok:
            return resp
        if resp.status_code == 404 and not_found is not None:
            raise exceptions.ProviderNotFound(
                'no resource provider with uuid %s' % not_found)
        raise self._error(method, path, resp)

    def _error(self, method, path, resp):
        try:
            error = resp.json()['errors'][0]
            code = error.get('code')
            detail = text.one_line(error.get('detail', ''))
        except (ValueError, KeyError, IndexError, TypeError):
            code, detail = None, text.one_line(resp.text[:200])
        where = '%s %s' % (method, path.split('?')[0])
        if resp.status_code == 409 and code == 'placement.concurrent_update':
            return exceptions.ConcurrentUpdate(
                '%s: provider generation conflict' % where)
        if (resp.status_code == 500 and method != 'GET'
                and _LOST_GENERATION_RACE in (detail or '')):
            # Placement (16.0 included) lets this one out of PUT
            # .../traits as a 500 when two API workers pass the generation
            # check at once and the loser's transaction is rolled back:
            # a 409 in all but status code, safe to re-read and retry.
            return exceptions.ConcurrentUpdate(
                '%s: provider generation conflict (reported as 500)' % where)
        if resp.status_code == 400:
            match = _NO_SUCH_TRAIT.search(detail)
            if match:
                return exceptions.UnknownTraits(
                    trait_names.names_in(match.group(1)))
        if resp.status_code == 401:
            return exceptions.CredentialsRefused(
                'Placement refused the credentials (401) on %s: the token is '
                'not valid there (a wrong admin token, or a token from a '
                'Keystone other than the one Placement checks with)' % where)
        if resp.status_code == 403:
            # The one line says which role to give, and the rule refused.
            match = _POLICY_RULE.search(detail or '')
            rule = ', policy %s' % match.group(1) if match else ''
            return exceptions.CredentialsRefused(
                'Placement refused %s (403%s): the Keystone user needs the '
                '%s role (or admin) in its project' % (where, rule, ROLE))
        return exceptions.PlacementError(
            'Placement answered %d to %s: %s'
            % (resp.status_code, where, detail or code or 'no detail'))

    def list_resource_providers(self, **filters):
        """GET /resource_providers with filters (name, uuid, required, ...)."""
        params = sorted((k, v) for k, v in filters.items() if v is not None)
        path = '/resource_providers'
        if params:
            path += '?' + encode_query(params)
        return self.request('GET', path).json()['resource_providers']

    def get_inventories(self, uuid):
        return self.request('GET', '/resource_providers/%s/inventories'
                            % quote(uuid)).json()['inventories']

    def get_usages(self, uuid):
        """Resource class -> amount used on one provider."""
        return self.request('GET', '/resource_providers/%s/usages'
                            % quote(uuid), not_found=uuid).json()['usages']

    def list_resource_classes(self):
        """The names of every resource class Placement knows."""
        return {rc['name'] for rc in self.request(
            'GET', '/resource_classes').json()['resource_classes']}

    def get_provider_traits(self, uuid):
        """Return (set of traits, provider generation)."""
        body = self.request('GET', '/resource_providers/%s/traits'
                            % quote(uuid), not_found=uuid).json()
        return set(body['traits']), body['resource_provider_generation']

    def put_provider_traits(self, uuid, traits, generation):
        """Replace a provider's traits; returns the new generation."""
        body = {'traits': sorted(traits),
                'resource_provider_generation': generation}
        return self.request('PUT', '/resource_providers/%s/traits'
                            % quote(uuid), body, not_found=uuid).json()[
            'resource_provider_generation']

    def list_traits(self, names):
        """Which of ``names`` Placement knows (GET /traits?name=in:...)."""
        names = sorted(names)
        for name in names:
            if not trait_names.is_name(name):
                raise ValueError('invalid trait name %r' % (name,))
        if not names:
            return set()
        path = '/traits?' + encode_query([('name', 'in:' + ','.join(names))])
        return set(self.request('GET', path).json()['traits'])

    def list_associated_traits(self):
        """Every trait at least one provider carries (one request)."""
        return set(self.request('GET', '/traits?associated=true').json()[
            'traits'])

    def create_trait(self, name):
        """PUT /traits/{name}: creates a CUSTOM_ trait, idempotent."""
        self.request('PUT', '/traits/%s' % quote(name), ok=(201, 204))

    def get_allocation_candidates(self, query_string):
        return self.request(
            'GET', '/allocation_candidates?' + query_string).json()


#: Placement's ResourceProviderConcurrentUpdateDetected message.
_LOST_GENERATION_RACE = 'concurrently updated the resource provider data'
#: Placement's PolicyNotAuthorized message names the rule it checked.
_POLICY_RULE = re.compile(r'Policy does not allow (\S+) to be performed')
#: The Keystone role Placement's default policy asks for every request
#: this project makes (reads included): ``service``, or ``admin``.
ROLE = 'service'

