"""Build a PlacementClient from nova.conf's [placement] or from openstacksdk.

A compute node uses the ``[placement]`` section it already has; an operator's
shell uses ``--os-cloud`` / ``OS_*`` through openstacksdk. Both end in a
keystoneauth1 adapter, so retries and credential redaction are keystoneauth1's.
"""

import logging
import os
from urllib import parse

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
import requests

from image_type_common import exceptions
from image_type_common import placement_client
from image_type_common import text
from image_type_common.conf import placement as placement_conf

LOG = logging.getLogger(__name__)
GROUP = placement_conf.placement_group.name


def adapter_from_conf(conf):
    """A keystoneauth1 Adapter from the ``[placement]`` options."""
    try:
        auth = ks_loading.load_auth_from_conf_options(conf, GROUP)
    except (ks_exc.ClientException, ValueError) as exc:
        raise exceptions.ConfigError(
            '[placement] auth options: %s' % text.one_line(exc)
        ) from exc
    if auth is None:
        raise exceptions.ConfigError(
            '[placement] auth_type is not set: give nova.conf a [placement] '
            'section, or use --os-cloud / OS_* environment')
    check_placement_section(conf[GROUP])
    session = ks_loading.load_session_from_conf_options(conf, GROUP, auth=auth)
    return ks_loading.load_adapter_from_conf_options(
        conf, GROUP, session=session, auth=auth)


def _option(group, name):
    try:
        return getattr(group, name)
    except cfg.NoSuchOptError:
        return None


def check_placement_section(group):
    """Refuse what can only fail later, before anything is sent.

    An empty token, an endpoint or auth_url that is not an http(s) URL, and
    an identity endpoint that answers version discovery with 401 or 403 (it
    is not Keystone's public discovery document; keystoneauth1 would then
    retry authenticated inside its own lock and hang for ever).
    """
    for name in ('endpoint', 'endpoint_override', 'auth_url'):
        value = _option(group, name)
        if value is not None and not _is_url(value):
            raise exceptions.ConfigError(
                '[placement] %s: %s is not an http(s) URL'
                % (name, text.safe_repr(value)))
    token = _option(group, 'token')
    if token is not None and not token.strip():
        raise exceptions.ConfigError('[placement] token is empty')
    if _option(group, 'auth_url'):
        _probe_identity(group.auth_url, _option(group, 'timeout') or 10)


def _is_url(value):
    parsed = parse.urlparse(value)
    return parsed.scheme in ('http', 'https') and bool(parsed.netloc)


def _probe_identity(auth_url, timeout):
    try:
        answer = requests.get(auth_url, timeout=timeout,
                              headers={'Accept': 'application/json'})
    except requests.RequestException:
        return  # unreachable: keystoneauth1 reports and retries that
    if answer.status_code in (401, 403):
        raise exceptions.ConfigError(
            '[placement] auth_url %s answered %d to version discovery, which '
            'Keystone answers without credentials: is it the identity '
            'endpoint?' % (text.safe_repr(auth_url), answer.status_code))


def adapter_from_cloud(cloud=None):
    """openstacksdk's placement proxy (a keystoneauth1 Adapter) for a cloud."""
    import openstack
    from openstack import exceptions as sdk_exc

    try:
        conn = openstack.connect(cloud=cloud)
        proxy = conn.placement
    except (sdk_exc.SDKException, ks_exc.ClientException) as exc:
        raise exceptions.ConfigError(
            'openstacksdk cloud %s: %s' % (cloud or '(environment)',
                                           text.one_line(exc))
        ) from exc
    for attr in ('connect_retries', 'status_code_retries'):
        if getattr(proxy, attr, None) is None:
            setattr(proxy, attr, placement_conf.DEFAULT_RETRIES)
    if proxy.session.timeout is None:  # no api_timeout in the cloud config
        proxy.session.timeout = placement_conf.DEFAULT_TIMEOUT
    return proxy


def has_cloud_environment():
    return any(key.startswith('OS_') for key in os.environ)


def client_for(conf=None, cloud=None):
    """Pick the credentials source the way the CLI documents it.

    ``--os-cloud`` wins; else nova.conf's ``[placement]`` when it names an
    auth plugin; else ``OS_*`` environment; else a ConfigError.
    """
    if cloud:
        return placement_client.PlacementClient(adapter_from_cloud(cloud))
    if conf is not None and conf.placement.auth_type:
        return placement_client.PlacementClient(adapter_from_conf(conf))
    if has_cloud_environment():
        return placement_client.PlacementClient(adapter_from_cloud())
    raise exceptions.ConfigError(
        'no Placement credentials: set [placement] auth_type (and its '
        'options) in the config file, or use --os-cloud / OS_* environment')
