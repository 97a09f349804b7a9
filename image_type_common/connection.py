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

"""Build a PlacementClient from nova.conf's [placement] or from openstacksdk.

A compute node uses its ``[placement]`` section, an operator's shell
``--os-cloud`` / ``OS_*`` through openstacksdk; both end in a keystoneauth1
adapter (its retries, its redaction), whose one Session carries every
request with the source's TLS settings and timeout (``tls``).
"""

import logging
import os
from urllib import parse

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading

from image_type_common import exceptions
from image_type_common import placement_client
from image_type_common import text
from image_type_common import tls
from image_type_common.conf import keystoneauth

LOG = logging.getLogger(__name__)


def adapter_from_conf(conf, group='placement', service='Placement',
                      unset='give nova.conf a [placement] section, or use '
                            '--os-cloud / OS_* environment'):
    """A keystoneauth1 Adapter from nova.conf's ``[group]`` (as
    nova-compute builds its own to reach ``service``). What cannot work
    is refused before a token is asked for, in one line naming the option
    (``unset``: what to do without an auth plugin)."""
    try:
        auth = ks_loading.load_auth_from_conf_options(conf, group)
    except (ks_exc.ClientException, ValueError) as exc:
        raise exceptions.ConfigError(
            '[%s] auth options: %s' % (group, text.one_line(exc))
        ) from exc
    if auth is None:
        raise exceptions.ConfigError(
            '[%s] auth_type is not set: %s' % (group, unset))
    section = conf[group]
    for name in ('endpoint', 'endpoint_override', 'auth_url'):
        value = getattr(section, name, None)  # not every plugin has it
        url = parse.urlparse(value or '')
        if value is not None and not (url.scheme in ('http', 'https')
                                      and url.netloc):
            raise exceptions.ConfigError(
                '[%s] %s: %s is not an http(s) URL'
                % (group, name, text.safe_repr(value)))
    settings = tls.section(group)
    tls.check_files(settings, section.cafile, section.certfile,
                    section.keyfile)
    session = ks_loading.load_session_from_conf_options(conf, group, auth=auth)
    tls.warn_if_insecure(session.verify, settings, service)
    token = getattr(section, 'token', None)
    if token is not None and not token.strip():
        raise exceptions.ConfigError('[%s] token is empty' % group)
    if getattr(section, 'auth_url', None):
        _probe_identity(group, section.auth_url, session, settings)
    return ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth)


def _probe_identity(group, auth_url, session, settings):
    """One unauthenticated GET of ``auth_url``: a TLS failure is named
    now, and 401 or 403 refused (not Keystone's public discovery document:
    keystoneauth1 would retry it authenticated, inside its lock, for
    ever)."""
    try:
        answer = _get_unauthenticated(session, auth_url)
    except ks_exc.ConnectionError as exc:
        if tls.failure(exc, settings, session.cert) is not None:
            raise connection_error('Keystone', auth_url, exc, session,
                                   settings, exceptions.KeystoneUnavailable
                                   ) from exc
        return  # unreachable: keystoneauth1 reports and retries that
    if answer.status_code in (401, 403):
        raise exceptions.ConfigError(
            '[%s] auth_url %s answered %d to version discovery, which '
            'Keystone answers without credentials: is it the identity '
            'endpoint?' % (group, text.safe_repr(auth_url),
                           answer.status_code))


def connect(cloud, service):
    """An openstacksdk Connection for a clouds.yaml entry (or, None, the
    ``OS_*`` environment), held to what ``adapter_from_conf`` holds a
    section to, with ``keystoneauth.DEFAULT_TIMEOUT`` where the cloud sets
    no ``api_timeout`` (keystoneauth1's default is none)."""
    import openstack
    from openstack import exceptions as sdk_exc

    try:
        conn = openstack.connect(cloud=cloud)
    except (sdk_exc.SDKException, ks_exc.ClientException) as exc:
        raise cloud_error(cloud, exc) from exc
    settings = conn.config.config
    tls.check_files(tls.CLOUDS_YAML, settings.get('cacert'),
                    settings.get('cert'), settings.get('key'))
    tls.warn_if_insecure(conn.session.verify, tls.CLOUDS_YAML, service)
    if conn.session.timeout is None:  # no api_timeout in the cloud config
        conn.session.timeout = keystoneauth.DEFAULT_TIMEOUT
    return conn


def cloud_error(cloud, exc):
    """openstacksdk's failure for ``cloud``, as a ConfigError (exit 2)."""
    return exceptions.ConfigError('openstacksdk cloud %s: %s' % (
        cloud or '(environment)', text.one_line(exc)))


def adapter_from_cloud(cloud=None):
    """openstacksdk's placement proxy for a cloud, discovered
    (``NamedServiceAdapter.sdk_proxy``), with ``[placement]``'s default
    retries where the cloud's configuration left them unset."""
    conn = connect(cloud, 'Placement')
    _, proxy, _ = NamedServiceAdapter(
        conn.config.get_session_client('placement'), tls.CLOUDS_YAML
    ).sdk_proxy(conn, 'check the catalogue\'s placement entry')
    for name in keystoneauth.RETRY_OPTIONS:
        if getattr(proxy, name, None) is None:
            setattr(proxy, name, keystoneauth.DEFAULT_RETRIES)
    return proxy


def connection_error(service, url, exc, session, settings, unavailable):
    """Our error for a failed connection to ``service`` at ``url``:
    ``unavailable`` (exit 1, may pass), or a ConfigError for a refused
    certificate, naming the setting in the words of ``settings``. The
    reason: ``tls.failure``'s, keystoneauth1's timeout, or that of the
    OSError urllib3 raised from ("connection refused")."""
    failed = tls.failure(exc, settings, getattr(session, 'cert', None))
    timeout = getattr(session, 'timeout', None)
    oserror = next((seen for seen in tls.chain(exc)
                    if isinstance(seen, OSError) and seen.strerror), None)
    if failed:
        reason = failed.reason
    elif tls.in_chain(exc, ks_exc.ConnectTimeout) is not None:
        reason = ('timed out (no answer within %g s)' % timeout if timeout
                  else 'timed out')
    elif oserror is not None:
        reason = oserror.strerror.lower()
    else:
        reason = 'connection failed (%s)' % type(exc).__name__
    kind = (exceptions.ConfigError if failed and failed.configuration
            else unavailable)
    return kind('cannot reach %s at %s: %s' % (service, url, reason))


def _get_unauthenticated(session, url):
    """One GET of ``url`` through ``session``, no token, no retries."""
    return session.get(url, authenticated=False, raise_exc=False,
                       connect_retries=0, status_code_retries=0,
                       headers={'Accept': 'application/json'})


def keystone_error(exc, identity_url, session=None, settings=tls.NOVA_CONF,
                   service='Placement',
                   unavailable=exceptions.KeystoneUnavailable,
                   refused=exceptions.CredentialsRefused):
    """Our error for a keystoneauth1 failure on the way to ``service``,
    from its type: Keystone unreachable is ``unavailable`` (exit 1),
    refused credentials ``refused``, a refused certificate or a missing
    endpoint configuration (exit 2)."""
    where = text.one_line(identity_url or '(no auth_url)')
    if isinstance(exc, (ks_exc.ConnectionError, ks_exc.DiscoveryFailure)):
        return connection_error('Keystone', where, exc, session, settings,
                                unavailable)
    if isinstance(exc, ks_exc.HttpError):
        if exc.http_status in (401, 403):
            return refused('Keystone at %s refused the credentials (%d)'
                           % (where, exc.http_status))
        return unavailable('Keystone at %s answered %s'
                           % (where, exc.http_status))
    if isinstance(exc, ks_exc.CatalogException):
        return exceptions.ConfigError(
            'Keystone\'s catalogue at %s has no %s endpoint: %s'
            % (where, service, text.one_line(exc)))
    return exceptions.ConfigError(
        '%s credentials: %s' % (service, text.one_line(exc)))


class NamedServiceAdapter:
    """A keystoneauth1 Adapter (or openstacksdk proxy) whose failures name
    the service that failed, in one line: the token and the endpoint are
    asked for first, so a failure there names Keystone and its URL
    (doc/source/install/credentials.rst). The three errors are for no
    answer from the service, none from Keystone, and refused credentials;
    every other attribute is the wrapped adapter's."""

    def __init__(self, adapter, settings=tls.NOVA_CONF, service='Placement',
                 unavailable=exceptions.PlacementUnavailable,
                 keystone_unavailable=exceptions.KeystoneUnavailable,
                 refused=exceptions.CredentialsRefused):
        self._adapter = adapter
        self._settings = settings
        self._service = service
        self._unavailable = unavailable
        self._keystone_unavailable = keystone_unavailable
        self._refused = refused
        self._session = adapter.session
        auth = adapter.auth or self._session.auth
        #: Keystone's URL (admin_token has none).
        self.identity_url = getattr(auth, 'auth_url', None)
        hooks = self._session.session.hooks['response']
        if not any(isinstance(hook, TokenLines) for hook in hooks):
            hooks.append(TokenLines(self.identity_url))

    def __getattr__(self, name):
        return getattr(self._adapter, name)

    def listed_endpoint(self, unset):
        """Keystone's steps: the token, and the service's endpoint as
        configured or catalogued (``unset``: what to do without one)."""
        try:
            self._adapter.get_token()
            listed = self._adapter.get_endpoint(skip_discovery=True)
        except ks_exc.ClientException as exc:
            raise self.keystone_error(exc) from exc
        if not listed:
            raise exceptions.ConfigError('no %s endpoint: %s'
                                         % (self._service, unset))
        return listed

    # The module's errors, for this service and source.
    def keystone_error(self, exc):
        return keystone_error(exc, self.identity_url, self._session,
                              self._settings, self._service,
                              self._keystone_unavailable, self._refused)

    def connection_error(self, url, exc):
        return connection_error(self._service, url, exc, self._session,
                                self._settings, self._unavailable)

    def discovery_error(self, url, otherwise=None):
        """Why version discovery at ``url`` failed where the library kept
        no cause: one GET of our own, on the failure path only
        (``otherwise``: the error if it answers with success)."""
        try:
            answer = _get_unauthenticated(self._session, url)
        except ks_exc.ConnectionError as exc:
            return self.connection_error(url, exc)
        if answer.status_code < 400 and otherwise is not None:
            return otherwise
        return self._unavailable(
            'cannot reach %s at %s: it answered %d without a version '
            'document' % (self._service, url, answer.status_code))

    def sdk_proxy(self, conn, unset):
        """(The endpoint as listed, the proxy, its endpoint data): the
        Keystone steps on this undiscovered adapter, then ``conn``'s proxy
        of its service type, which discovers the service's versions."""
        from openstack import exceptions as sdk_exc

        listed = self.listed_endpoint(unset)
        try:
            proxy = getattr(conn, self._adapter.service_type)
            data = proxy.get_endpoint_data()
        except ks_exc.ConnectionError as exc:
            raise self.connection_error(listed, exc) from exc
        except ks_exc.DiscoveryFailure as exc:
            raise self.discovery_error(listed) from exc
        except (sdk_exc.SDKException, ks_exc.ClientException) as exc:
            error = exceptions.ConfigError('%s at %s: %s' % (
                self._service, listed, text.one_line(exc)))
            if isinstance(exc, sdk_exc.NotSupported):
                # Also what openstacksdk says when discovery failed (a
                # refused client certificate, say): one GET says why.
                error = self.discovery_error(listed, error)
            raise error from exc
        if data is None or not data.url:
            raise self.discovery_error(listed)
        return listed, proxy, data

    def request(self, url, method, **kwargs):
        """The Keystone steps, keystoneauth1's discovery of Placement's
        endpoint, then the request."""
        listed = self.listed_endpoint(
            'set [placement] endpoint_override (or endpoint), or check the '
            'catalogue\'s placement entry')
        try:
            endpoint = self._adapter.get_endpoint() or listed
        except (ks_exc.ConnectionError, ks_exc.DiscoveryFailure) as exc:
            raise self.connection_error(listed, exc) from exc
        try:
            resp = self._adapter.request(url, method, **kwargs)
        except ks_exc.ConnectionError as exc:
            raise self.connection_error(endpoint, exc) from exc
        # There, but cannot serve now (after keystoneauth1's retries).
        if resp.status_code in keystoneauth.RETRIABLE_STATUS_CODES:
            status = ('%d %s' % (resp.status_code, resp.reason or '')).strip()
            raise exceptions.PlacementUnavailable(
                'Placement at %s answered %s to %s %s'
                % (endpoint, status, method, url.split('?')[0]))
        return resp


class TokenLines:
    """One DEBUG line per Keystone token a keystoneauth1 Session obtains
    (doc/source/install/credentials.rst, "Keystone tokens"): a response
    hook of its requests Session (requests' extension point; keystoneauth1
    has none for a new token) on each ``POST .../auth/tokens`` answered
    201."""

    def __init__(self, identity_url):
        self.identity_url = identity_url
        self.obtained = 0

    def __call__(self, response, *args, **kwargs):
        if response.status_code != 201 or response.request.method != 'POST' \
                or not parse.urlsplit(response.url).path.endswith(
                    '/auth/tokens'):
            return
        self.obtained += 1
        try:
            expires = response.json()['token']['expires_at']
        except (ValueError, KeyError, TypeError):
            expires = None
        LOG.debug('Keystone token %s at %s (expires %s; %d obtained by '
                  'this process\'s client)',
                  'obtained' if self.obtained == 1 else 'renewed',
                  self.identity_url, expires, self.obtained)


def client(adapter, settings=tls.NOVA_CONF):
    """A PlacementClient whose failures are a NamedServiceAdapter's."""
    return placement_client.PlacementClient(
        NamedServiceAdapter(adapter, settings))


def has_cloud_environment():
    return any(key.startswith('OS_') for key in os.environ)


def client_for(conf=None, cloud=None):
    """The credentials source, as the CLI documents it: ``--os-cloud``;
    else ``[placement]`` when it names an auth plugin; else ``OS_*``."""
    if not cloud and conf is not None and conf.placement.auth_type:
        return client(adapter_from_conf(conf), tls.NOVA_CONF)
    if cloud or has_cloud_environment():
        return client(adapter_from_cloud(cloud or None), tls.CLOUDS_YAML)
    raise exceptions.ConfigError(
        'no Placement credentials: set [placement] auth_type (and its '
        'options) in the config file, or use --os-cloud / OS_* environment')
