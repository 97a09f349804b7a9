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

openstacksdk's compute and image proxies on the operator's own
credentials: a server (by id, or by name in any project), the compute
services and nodes, and an image with Glance's schema, as glanceclient
gives it to Nova. A server or image that does not exist is NotFound (exit
2); a refused credential or certificate a ConfigError naming the API and
the role or setting; anything else a CloudError (exit 1) naming the
service and its URL.
"""

import contextlib
import functools
import warnings

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session

from image_type_common import connection
from image_type_common import exceptions
from image_type_common import text
from image_type_common import tls
from image_type_common.conf import keystoneauth

NOVA, GLANCE = 'Nova', 'Glance'


class NotFound(exceptions.ConfigError):
    """No such server, flavor or image (Nova's own lookups say which)."""


class CloudError(exceptions.Error):
    """Nova or Glance could not be read (exit 1)."""


class GlanceImage(dict):
    """An image as Glance's API shows it, and Glance's image schema
    (``schema``): what glanceclient gives Nova's image API."""

    schema = None


class Cloud:
    """Nova and Glance through one openstacksdk Connection. ``settings``:
    where its session's TLS settings come from, for a failed handshake."""

    def __init__(self, conn, settings=tls.CLOUDS_YAML):
        self.conn = conn
        self.settings = settings
        self._compute = None

    def _where(self, service):
        from openstack import exceptions as sdk_exc

        proxy = 'compute' if service == NOVA else 'image'
        try:
            return getattr(self.conn, proxy).get_endpoint() or '(catalogue)'
        except (sdk_exc.SDKException, ks_exc.ClientException):
            return '(catalogue)'

    @contextlib.contextmanager
    def _asking(self, service):
        """openstacksdk's and keystoneauth1's failures, as one line."""
        from openstack import exceptions as sdk_exc

        session = self.conn.session
        try:
            yield
        except sdk_exc.HttpException as exc:
            request = getattr(exc.response, 'request', None)
            where = '%s %s' % (request.method, request.path_url.split(
                '?')[0]) if request is not None else 'a request'
            if exc.status_code in (401, 403):
                raise exceptions.ConfigError(
                    '%s refused the credentials (%d) on %s: reading servers '
                    'of any project and compute services needs the admin '
                    'role' % (service, exc.status_code, where)) from exc
            raise CloudError('%s at %s answered %s to %s' % (
                service, self._where(service), exc.status_code,
                where)) from exc
        except (ks_exc.ConnectionError, ks_exc.DiscoveryFailure) as exc:
            raise connection.connection_error(
                service, self._where(service), exc, session, self.settings,
                CloudError) from exc
        except (ks_exc.EndpointNotFound, ks_exc.CatalogException) as exc:
            raise exceptions.ConfigError(
                'no %s endpoint in the catalogue: %s'
                % (service, text.one_line(exc))) from exc
        except (sdk_exc.SDKException, ks_exc.ClientException,
                ValueError) as exc:  # ValueError: an answer not JSON
            raise CloudError('%s at %s: %s' % (
                service, self._where(service), text.one_line(exc))) from exc

    @property
    def compute(self):
        """The compute proxy, once its endpoint is known to answer as
        Nova's API (a 2.x maximum microversion)."""
        from openstack import warnings as sdk_warnings

        if self._compute is None:
            with self._asking(NOVA), warnings.catch_warnings():
                # An endpoint that is not Nova's is said below, in a line.
                warnings.simplefilter(
                    'ignore', sdk_warnings.UnsupportedServiceVersion)
                data = self.conn.compute.get_endpoint_data()
            found = getattr(data, 'max_microversion', None)
            if not found or found[0] != 2:
                raise CloudError(
                    'the compute endpoint %s does not answer as Nova\'s API '
                    '(maximum microversion %s): check the catalogue\'s '
                    'compute endpoint' % (self._where(NOVA), '.'.join(
                        map(str, found)) if found else 'none'))
            self._compute = self.conn.compute
        return self._compute

    def _find(self, service, what, find, name_or_id):
        """``find`` (openstacksdk's find_*) of ``name_or_id``: by id, else
        by name."""
        from openstack import exceptions as sdk_exc

        shown = text.safe_repr(name_or_id)
        with self._asking(service):
            try:
                return find(name_or_id, ignore_missing=False)
            except sdk_exc.NotFoundException as exc:
                raise NotFound('no %s %s in %s' % (what, shown, service)) \
                    from exc
            except sdk_exc.DuplicateResource as exc:
                raise exceptions.ConfigError(
                    'more than one %s is named %s: give its id'
                    % (what, shown)) from exc

    def server(self, name_or_id):
        """In any project, as openstacksdk finds it (a name is matched
        exactly)."""
        return self._find(NOVA, 'server', functools.partial(
            self.compute.find_server, all_projects=True), name_or_id)

    def project_id(self):
        """The project the credentials are scoped to, or None."""
        try:
            return self.conn.session.get_project_id()
        except ks_exc.ClientException:
            return None

    def compute_services(self):
        compute = self.compute
        with self._asking(NOVA):
            return list(compute.services(binary='nova-compute'))

    def hypervisors(self):
        """Each compute node: its hypervisor hostname (``name``: its
        resource provider's name, which is not its service's host on
        libvirt or ironic) and its service (``service_details``)."""
        compute = self.compute
        with self._asking(NOVA):
            return list(compute.hypervisors(details=True))

    def image(self, name_or_id):
        """A GlanceImage, found by openstacksdk and read as Glance
        answers: openstacksdk's Image converts some property values, and
        Nova must see them as Glance has them."""
        from openstack import exceptions as sdk_exc

        found = self._find(GLANCE, 'image', self.conn.image.find_image,
                           name_or_id)
        with self._asking(GLANCE):
            answer = self.conn.image.get('/images/%s' % found.id)
            sdk_exc.raise_from_response(answer)
            image = GlanceImage(answer.json())
            answer = self.conn.image.get('/schemas/image')
            sdk_exc.raise_from_response(answer)
            image.schema = answer.json()
        return image


def from_openstacksdk(cloud=None):
    """A Cloud on the operator's credentials: the clouds.yaml entry
    ``cloud``, else ``OS_*``, with their TLS settings; authenticated now,
    so that a refusal is one line naming Keystone."""
    from openstack import exceptions as sdk_exc

    conn = connection.connect(cloud, 'Nova and Glance')
    auth_url = conn.config.get_auth_args().get('auth_url')
    try:
        conn.session.get_token()
    except (ks_exc.ConnectionError, ks_exc.DiscoveryFailure,
            ks_exc.HttpError, ks_exc.CatalogException) as exc:
        raise connection.keystone_error(
            exc, auth_url, conn.session, tls.CLOUDS_YAML) from exc
    except (sdk_exc.SDKException, ks_exc.ClientException) as exc:
        raise exceptions.ConfigError(
            '%s (Nova and Glance are read with your own cloud credentials: '
            '--os-cloud or OS_*)' % connection.cloud_error(cloud, exc)
        ) from exc
    return Cloud(conn)


def on_session(session, interface=None, region_name=None,
               settings=tls.CLOUDS_YAML):
    """A Cloud on a keystoneauth1 session (the ``openstack`` client's):
    its credentials and TLS settings, with keystoneauth.DEFAULT_TIMEOUT
    where it has no timeout of its own."""
    from openstack import connection as sdk_connection

    session = ks_session.Session(
        auth=session.auth, verify=session.verify, cert=session.cert,
        timeout=session.timeout or keystoneauth.DEFAULT_TIMEOUT)
    return Cloud(sdk_connection.Connection(
        session=session, interface=interface, region_name=region_name),
        settings)
