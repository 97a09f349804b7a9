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

A compute node uses the ``[placement]`` section it already has; an operator's
shell uses ``--os-cloud`` / ``OS_*`` through openstacksdk. Both end in a
keystoneauth1 adapter, so retries and credential redaction are keystoneauth1's.
Every request, the start-up probe of ``auth_url`` and the diagnosis of a
failed version discovery included, goes through that adapter's one
Session: the CA bundle, client certificate, ``insecure`` and timeout of
the source apply to all of them (``image_type_common.tls``).
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
GROUP = keystoneauth.placement.group.name


def adapter_from_conf(conf, group=GROUP, service='Placement',
                      unset='give nova.conf a [placement] section, or use '
                            '--os-cloud / OS_* environment'):
    """A keystoneauth1 Adapter from nova.conf's ``[group]`` keystoneauth1
    options (``[placement]``, ``[ironic]``), as nova-compute builds its
    own to reach ``service``.

    What cannot work is refused before a token is asked for, in one line
    naming the option (exit 2; ``unset``: what to do without an auth
    plugin); ``insecure`` is one WARNING instead of urllib3's on each
    connection (doc/source/install/credentials.rst, "TLS").
    """
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
        if value is not None and not is_url(value):
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


def is_url(value):
    """Whether an option's value is an http(s) URL with a host: what
    ``[placement]`` and ``[ironic]``'s endpoints and ``auth_url`` must be."""
    parsed = parse.urlparse(value)
    return parsed.scheme in ('http', 'https') and bool(parsed.netloc)


def _probe_identity(group, auth_url, session, settings):
    """One unauthenticated GET of ``auth_url``, through the session every
    request uses: a TLS failure is named now, and an answer of 401 or 403
    refused (it is not Keystone's public discovery document; keystoneauth1
    would then retry authenticated inside its own lock and hang for
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


def connect(cloud, service, timeout=keystoneauth.DEFAULT_TIMEOUT):
    """An openstacksdk Connection for a clouds.yaml entry or (``cloud``
    None) the ``OS_*`` environment, held to what a nova.conf section is
    held to (``adapter_from_conf``): its TLS files checked before
    anything is sent, ``verify: false`` one WARNING naming ``service``,
    and ``timeout`` on every request where the cloud config sets no
    ``api_timeout`` (keystoneauth1's own default is none)."""
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
        conn.session.timeout = timeout
    return conn


def cloud_error(cloud, exc):
    """openstacksdk's failure for ``cloud``, as a ConfigError (exit 2)."""
    return exceptions.ConfigError('openstacksdk cloud %s: %s' % (
        cloud or '(environment)', text.one_line(exc)))


def adapter_from_cloud(cloud=None):
    """openstacksdk's placement proxy (a keystoneauth1 Adapter) for a
    cloud, its versions discovered (``NamedServiceAdapter.sdk_proxy``),
    with the retries ``[placement]`` defaults to where the cloud config
    sets none."""
    conn = connect(cloud, 'Placement')
    _, proxy, _ = NamedServiceAdapter(
        conn.config.get_session_client('placement'), tls.CLOUDS_YAML
    ).sdk_proxy(conn, 'check the catalogue\'s placement entry')
    keystoneauth.apply_retries(proxy)
    return proxy


def failure_reason(exc, timeout):
    """Why a connection failed, in a few words: keystoneauth1's timeout,
    or the operating system's reason (the OSError urllib3 raised its
    error from: "connection refused", "name or service not known"),
    looked for along the chain a DiscoveryFailure wraps too. (A TLS
    failure is ``tls.failure``'s to word.)"""
    if tls.in_chain(exc, ks_exc.ConnectTimeout) is not None:
        return ('timed out (no answer within %g s)' % timeout if timeout
                else 'timed out')
    for seen in tls.chain(exc):
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror.lower()
    return 'connection failed (%s)' % type(exc).__name__


def connection_error(service, url, exc, session, settings,
                     unavailable=exceptions.PlacementUnavailable):
    """Our error for a connection to ``service`` at ``url`` through
    ``session`` (None: unknown) that failed: ``unavailable`` (exit 1, may
    pass), or a ConfigError (exit 2) when a certificate was refused or a
    client certificate is missing or not accepted; a TLS failure names the
    setting to look at, in the words of ``settings`` (where the
    credentials come from)."""
    failed = tls.failure(exc, settings, getattr(session, 'cert', None))
    reason = failed.reason if failed else failure_reason(
        exc, getattr(session, 'timeout', None))
    kind = (exceptions.ConfigError if failed and failed.configuration
            else unavailable)
    return kind('cannot reach %s at %s: %s' % (service, url, reason))


def _get_unauthenticated(session, url):
    """One GET of ``url`` through ``session`` (its CA bundle, client
    certificate and timeout), without a token and without retries."""
    return session.get(url, authenticated=False, raise_exc=False,
                       connect_retries=0, status_code_retries=0,
                       headers={'Accept': 'application/json'})


def keystone_error(exc, identity_url, session=None, settings=tls.NOVA_CONF,
                   service='Placement',
                   unavailable=exceptions.KeystoneUnavailable,
                   refused=exceptions.CredentialsRefused):
    """One of our errors for a keystoneauth1 failure while authenticating
    or reading the catalogue on the way to ``service``: unreachable
    Keystone is a runtime failure (exit 1, ``unavailable``), refused
    credentials (``refused``), a refused certificate and a missing
    endpoint are configuration (exit 2). ``session`` and ``settings``: as
    for ``connection_error``."""
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
    the service that failed: the token and the endpoint are asked for
    first, so that a failure there names Keystone and its URL, and one of
    the request the service and its URL, each in one line
    (doc/source/install/credentials.rst). ``settings``: where the TLS
    settings come from; ``unavailable``, ``keystone_unavailable`` and
    ``refused``: the errors for no answer from the service, none from
    Keystone, and refused credentials. Every other attribute is the
    wrapped adapter's. Each token obtained is one DEBUG line
    (``log_tokens``).
    """

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
        #: Keystone's URL, when the auth plugin has one (admin_token has
        #: none).
        self.identity_url = getattr(auth, 'auth_url', None)
        log_tokens(self._session, self.identity_url)

    def __getattr__(self, name):
        return getattr(self._adapter, name)

    def listed_endpoint(self, unset):
        """Authenticate if needed and find the service's endpoint as
        configured or catalogued, without contacting it (the steps that
        are Keystone's). ``unset``: what to do when there is none."""
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
        """Why version discovery at ``url`` failed, when the library that
        tried kept no cause: one GET of our own through the same session,
        on the failure path only. ``otherwise``: the error to give when it
        answers with success after all."""
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
        """The Keystone steps (``listed_endpoint``), then openstacksdk's
        proxy of this adapter's service type on ``conn``, which discovers
        the versions the service's endpoint offers (the service's step).
        (The endpoint as listed, the proxy, its endpoint data.) An
        undiscovered adapter (``conn.config.get_session_client``) takes
        the Keystone steps: ``conn``'s proxy discovers as it is made."""
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
                # "No supported versions" is also what openstacksdk says
                # when discovery failed (a refused client certificate
                # among others): one GET of our own says why.
                error = self.discovery_error(listed, error)
            raise error from exc
        if data is None or not data.url:
            raise self.discovery_error(listed)
        return listed, proxy, data

    def placement_url(self):
        """The Keystone steps (``listed_endpoint``), then let keystoneauth1
        discover the versions Placement's own endpoint offers (Placement's
        step)."""
        listed = self.listed_endpoint(
            'set [placement] endpoint_override (or endpoint), or check the '
            'catalogue\'s placement entry')
        try:
            return self._adapter.get_endpoint() or listed
        except (ks_exc.ConnectionError, ks_exc.DiscoveryFailure) as exc:
            raise self.connection_error(listed, exc) from exc

    def request(self, url, method, **kwargs):
        endpoint = self.placement_url()
        try:
            resp = self._adapter.request(url, method, **kwargs)
        except (ks_exc.ConnectionError, ks_exc.RetriableConnectionFailure,
                ) as exc:
            raise self.connection_error(endpoint, exc) from exc
        # Placement is there but cannot serve now, after keystoneauth1's
        # status_code_retries.
        if resp.status_code in keystoneauth.RETRIABLE_STATUS_CODES:
            status = ('%d %s' % (resp.status_code, resp.reason or '')).strip()
            raise exceptions.PlacementUnavailable(
                'Placement at %s answered %s to %s %s'
                % (endpoint, status, method, url.split('?')[0]))
        return resp


class TokenLines:
    """One DEBUG line per Keystone token a keystoneauth1 Session obtains,
    as doc/source/install/credentials.rst's "Keystone tokens" says: a
    response hook of its requests Session (requests' documented extension
    point; keystoneauth1 has none for a new token), seeing each
    ``POST .../auth/tokens`` Keystone answers 201."""

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


def log_tokens(session, identity_url):
    """Add ``TokenLines`` to a keystoneauth1 Session, once."""
    hooks = session.session.hooks['response']
    if not any(isinstance(hook, TokenLines) for hook in hooks):
        hooks.append(TokenLines(identity_url))


def client(adapter, settings=tls.NOVA_CONF):
    """A PlacementClient whose failures name Keystone or Placement, and
    a TLS failure the setting to look at, in the words of ``settings``
    (where the adapter's session took its TLS files from)."""
    return placement_client.PlacementClient(
        NamedServiceAdapter(adapter, settings))


def has_cloud_environment():
    return any(key.startswith('OS_') for key in os.environ)


def client_for(conf=None, cloud=None):
    """Pick the credentials source the way the CLI documents it.

    ``--os-cloud`` wins; else nova.conf's ``[placement]`` when it names an
    auth plugin; else ``OS_*`` environment; else a ConfigError.
    """
    if cloud:
        return client(adapter_from_cloud(cloud), tls.CLOUDS_YAML)
    if conf is not None and conf.placement.auth_type:
        return client(adapter_from_conf(conf), tls.NOVA_CONF)
    if has_cloud_environment():
        return client(adapter_from_cloud(), tls.CLOUDS_YAML)
    raise exceptions.ConfigError(
        'no Placement credentials: set [placement] auth_type (and its '
        'options) in the config file, or use --os-cloud / OS_* environment')
