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

"""Read a server, an image and the compute services as the operator's
``openstack`` reads them.

Nova's and Glance's APIs through keystoneauth1 adapters built from the
operator's own credentials (openstacksdk: ``--os-cloud``, clouds.yaml,
``OS_*``; or the ``openstack`` client's session): a server (by id, or by
name in any project), the compute services and compute nodes, the compute
API's maximum microversion, and an image as Glance has it (its properties
split from Glance's base attributes by Glance's own image schema, as
Nova's Glance client does).

Every request has a timeout and goes through the one Session of the
credentials, with their TLS settings (``image_type_common.tls``). A
server or image that does not exist is NotFound (exit 2, one line); a
refusal of the credentials or of a certificate is a ConfigError naming
the API and the role or the setting; anything else a CloudError (exit 1)
naming the service and its URL.
"""

import logging
import re
from urllib import parse

from keystoneauth1 import adapter as adapter_mod
from keystoneauth1 import exceptions as ks_exc

from image_type_common import connection
from image_type_common import exceptions
from image_type_common import text
from image_type_common import tls
from image_type_common.conf import keystoneauth

LOG = logging.getLogger(__name__)
#: The microversion asked for: no newer one than Nova 31 (2.100) knows.
COMPUTE_MICROVERSION = (2, 100)


class NotFound(exceptions.ConfigError):
    """No such server, flavor or image (Nova's own lookups say which)."""


class CloudError(exceptions.Error):
    """Nova or Glance could not be read (exit 1)."""


def parse_version(value):
    major, _, minor = str(value).partition('.')
    return int(major), int(minor or 0)


class _Api:
    service = None

    def __init__(self, adapter, timeout=None, settings=tls.CLOUDS_YAML):
        self.adapter = adapter
        session = getattr(adapter, 'session', None)
        self.timeout = timeout or getattr(session, 'timeout', None) or \
            keystoneauth.DEFAULT_TIMEOUT
        #: Where the TLS settings come from, for a failed handshake.
        self.settings = settings
        self.cert = getattr(session, 'cert', None)

    def _where(self):
        try:
            return self.adapter.get_endpoint() or '(catalogue)'
        except ks_exc.ClientException:
            return '(catalogue)'

    def _unreachable(self, exc):
        return connection.connection_error(
            self.service, self._where(), exc, self.timeout, self.settings,
            self.cert, CloudError)

    def get(self, path, ok_missing=False, **kwargs):
        """The JSON answer to GET ``path``; None for a 404 when
        ``ok_missing``."""
        try:
            resp = self.adapter.get(path, raise_exc=False,
                                    timeout=self.timeout, **kwargs)
        except (ks_exc.ConnectionError, ks_exc.DiscoveryFailure) as exc:
            raise self._unreachable(exc) from exc
        except (ks_exc.EndpointNotFound, ks_exc.CatalogException) as exc:
            raise exceptions.ConfigError(
                'no %s endpoint in the catalogue: %s'
                % (self.service, text.one_line(exc))) from exc
        except ks_exc.ClientException as exc:
            raise CloudError('%s: %s' % (self.service,
                                         text.one_line(exc))) from exc
        where = 'GET %s' % path.split('?')[0]
        if resp.status_code == 404 and ok_missing:
            return None
        if resp.status_code in (401, 403):
            raise exceptions.ConfigError(
                '%s refused the credentials (%d) on %s: reading servers of '
                'any project and compute services needs the admin role'
                % (self.service, resp.status_code, where))
        if resp.status_code != 200:
            raise CloudError('%s at %s answered %d to %s' % (
                self.service, self._where(), resp.status_code, where))
        try:
            return resp.json()
        except ValueError as exc:
            raise CloudError('%s answered %s with no JSON' % (
                self.service, where)) from exc


class Compute(_Api):
    service = 'Nova'

    def __init__(self, adapter, timeout=None, settings=tls.CLOUDS_YAML):
        super().__init__(adapter, timeout, settings)
        self._max = None

    def max_version(self):
        """The compute API's maximum microversion, as (2, N), from its
        version document."""
        if self._max is None:
            try:
                data = self.adapter.get_endpoint_data()
            except (ks_exc.ConnectionError, ks_exc.DiscoveryFailure) as exc:
                raise self._unreachable(exc) from exc
            except (ks_exc.EndpointNotFound,
                    ks_exc.CatalogException) as exc:
                raise exceptions.ConfigError(
                    'no %s endpoint in the catalogue: %s'
                    % (self.service, text.one_line(exc))) from exc
            except ks_exc.ClientException as exc:
                raise CloudError('%s at %s: %s' % (
                    self.service, self._where(),
                    text.one_line(exc))) from exc
            found = getattr(data, 'max_microversion', None)
            if not found or found[0] != 2:
                raise CloudError(
                    'the compute endpoint %s does not answer as Nova\'s API '
                    '(maximum microversion %s): check the catalogue\'s '
                    'compute endpoint' % (self._where(), '.'.join(
                        map(str, found)) if found else 'none'))
            self._max = tuple(found[:2])
        return self._max

    def _microversion(self, wanted=COMPUTE_MICROVERSION):
        return '%d.%d' % min(self.max_version(), wanted)

    def _get(self, path, ok_missing=False):
        return self.get(path, ok_missing=ok_missing,
                        microversion=self._microversion())

    def server(self, name_or_id):
        found = self._get('/servers/%s' % _quote(name_or_id),
                          ok_missing=True)
        if found is None:
            listed = self._get('/servers/detail?all_tenants=1&name=%s' %
                               _quote('^%s$' % _regex(name_or_id)))
            matches = [s for s in listed.get('servers', [])
                       if s.get('name') == name_or_id]
            if len(matches) > 1:
                raise exceptions.ConfigError(
                    'more than one server is named %s: give its id'
                    % text.safe_repr(name_or_id))
            if not matches:
                raise NotFound('no server %s in Nova'
                               % text.safe_repr(name_or_id))
            return matches[0]
        return found['server']

    def project_id(self):
        """The project the credentials are scoped to, or None."""
        try:
            return self.adapter.get_project_id()
        except ks_exc.ClientException:
            return None

    def compute_services(self):
        return self._get('/os-services?binary=nova-compute').get(
            'services', [])

    def hypervisors(self):
        """Each compute node: its hypervisor hostname (its resource
        provider's name, which is not its service's host on libvirt or
        ironic) and its service's host."""
        return self._get('/os-hypervisors/detail').get('hypervisors', [])


class Image(_Api):
    service = 'Glance'

    def __init__(self, adapter, timeout=None, settings=tls.CLOUDS_YAML):
        super().__init__(adapter, timeout, settings)
        self._base = None

    def base_attributes(self):
        """Glance's base image attributes: the schema's properties but
        those marked ``is_base: false`` (glanceclient's
        ``Schema.is_base_property``); everything else is an image property
        to Nova."""
        if self._base is None:
            schema = self.get('/schemas/image')
            self._base = frozenset(
                name for name, prop in (schema.get('properties') or {}).items()
                if isinstance(prop, dict) and prop.get('is_base', True))
        return self._base

    def image(self, name_or_id):
        found = self.get('/images/%s' % _quote(name_or_id),
                         ok_missing=True)
        if found is None:
            listed = self.get('/images?name=%s' % _quote(name_or_id))
            matches = listed.get('images', [])
            if len(matches) > 1:
                raise exceptions.ConfigError(
                    'more than one image is named %s: give its id'
                    % text.safe_repr(name_or_id))
            if not matches:
                raise NotFound('no image %s in Glance'
                               % text.safe_repr(name_or_id))
            found = matches[0]
        return found


def split_image(glance_image, base_attributes):
    """(base attributes, properties) of a Glance v2 image, as Nova's
    ``_extract_attributes_v2`` splits them."""
    omitted = ('self', 'schema', 'protected', 'virtual_size', 'file', 'tags',
               'direct_url', 'locations')
    base, properties = {}, {}
    for name, value in glance_image.items():
        if name in omitted:
            continue
        (base if name in base_attributes else properties)[name] = value
    return base, properties


def from_openstacksdk(cloud=None):
    """(Compute, Image) with the operator's credentials: the clouds.yaml
    entry ``cloud``, else ``OS_*``, with their TLS settings; authenticated
    now, so that a refusal is one line naming Keystone."""
    from openstack import exceptions as sdk_exc

    conn = connection.connect(cloud, 'Nova and Glance')
    auth_url = conn.config.get_auth_args().get('auth_url')
    try:
        conn.session.get_token()
    except (ks_exc.ConnectionError, ks_exc.DiscoveryFailure,
            ks_exc.HttpError, ks_exc.CatalogException) as exc:
        raise connection.keystone_error(
            exc, auth_url, conn.session.timeout, tls.CLOUDS_YAML,
            conn.session.cert) from exc
    except (sdk_exc.SDKException, ks_exc.ClientException) as exc:
        raise exceptions.ConfigError(
            '%s (Nova and Glance are read with your own cloud credentials: '
            '--os-cloud or OS_*)' % connection.cloud_error(cloud, exc)
        ) from exc
    return adapters(conn.session, interface=conn.config.get_interface(),
                    region_name=conn.config.get_region_name(),
                    settings=tls.CLOUDS_YAML)


def adapters(session, interface=None, region_name=None, timeout=None,
             settings=tls.CLOUDS_YAML):
    """(Compute, Image) on a keystoneauth1 session: the compute API from
    2.1 and Glance's v2, found in the catalogue and discovered as the
    ``openstack`` client finds them. ``settings``: where the session's TLS
    settings come from, for a failed handshake."""
    def one(service_type, min_version):
        return adapter_mod.Adapter(
            session, service_type=service_type, interface=interface,
            region_name=region_name, min_version=min_version,
            max_version='%s.latest' % min_version.split('.')[0])
    return (Compute(one('compute', '2.1'), timeout, settings),
            Image(one('image', '2.0'), timeout, settings))


def _quote(value):
    return parse.quote(str(value), safe='')


def _regex(name):
    return re.escape(str(name))
