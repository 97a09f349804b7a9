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

"""Keystone and Placement behind TLS with a private CA, for a test module.

The real Placement (gunicorn, HTTPS, a client certificate required) with
its real keystonemiddleware and policy, validating tokens against the
Keystone-shaped stand-in (``tests/identity_standin.py``), also on HTTPS
with a certificate of the same private CA. Users are made per test with
the roles a test wants; ``nova_conf`` writes the ``[placement]`` section a
compute node or an operator would have for one of them.
"""

import contextlib
import dataclasses
import os
import textwrap

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from image_type_common import placement_client
from placement_runner import embedded
from tests import identity_standin
from tests import private_ca

PROJECT = 'service'
#: Placement's own service user, for keystonemiddleware.
PLACEMENT_USER = 'placement'


@dataclasses.dataclass
class TLSCloud:
    ca: private_ca.Authority
    #: Another CA's files: trusted by nobody here.
    stranger: private_ca.Authority
    identity: identity_standin.IdentityStandIn
    placement: embedded.EmbeddedPlacement
    directory: str

    def add_user(self, name, roles, token_lifetime=None):
        """A Keystone user in the service project with exactly ``roles``;
        its password is its name reversed."""
        self.identity.add_user(name, name[::-1], PROJECT, roles,
                               token_lifetime)
        return name

    def placement_section(self, user, tls=True, extra=''):
        """nova.conf's ``[placement]`` for ``user``: password auth at the
        stand-in, Placement from its catalogue; with ``tls`` the CA
        bundle and client certificate lines."""
        lines = textwrap.dedent('''\
            [placement]
            auth_type = password
            auth_url = {auth_url}
            username = {user}
            password = {password}
            project_name = {project}
            user_domain_name = Default
            project_domain_name = Default
            region_name = {region}
            connect_retries = 0
            status_code_retries = 0
            ''').format(auth_url=self.identity.auth_url, user=user,
                        password=user[::-1], project=PROJECT,
                        region=identity_standin.REGION)
        if tls:
            lines += self.tls_lines()
        return lines + extra

    def tls_lines(self):
        return ('cafile = %s\ncertfile = %s\nkeyfile = %s\n'
                % (self.ca.cafile, self.ca.client_certfile,
                   self.ca.client_keyfile))

    def client(self, user):
        """A PlacementClient for ``user`` (its own session, TLS files
        set), for a test's own set-up and checks."""
        auth = v3.Password(auth_url=self.identity.auth_url, username=user,
                           password=user[::-1], project_name=PROJECT,
                           user_domain_name='Default',
                           project_domain_name='Default')
        session = ks_session.Session(
            auth=auth, verify=self.ca.cafile,
            cert=(self.ca.client_certfile, self.ca.client_keyfile),
            timeout=60)
        return placement_client.PlacementClient(ks_adapter.Adapter(
            session, service_type='placement',
            region_name=identity_standin.REGION))


def placement_options(identity, ca):
    """placement.conf: keystonemiddleware validating at the stand-in."""
    auth = {'auth_type': 'password', 'auth_url': identity.auth_url,
            'www_authenticate_uri': identity.auth_url,
            'username': PLACEMENT_USER, 'password': PLACEMENT_USER[::-1],
            'project_name': PROJECT, 'user_domain_name': 'Default',
            'project_domain_name': 'Default', 'cafile': ca.cafile,
            'memcached_servers': '', 'http_connect_timeout': '10'}
    return ['api.auth_strategy=keystone'] + [
        'keystone_authtoken.%s=%s' % item for item in auth.items()]


@contextlib.contextmanager
def tls_cloud(directory):
    """Start the stand-in Keystone and a TLS Placement in ``directory``
    (certificates made there); stop both, by their own handles, after."""
    directory = str(directory)
    ca = private_ca.make(directory)
    stranger = private_ca.make(directory, 'stranger')
    identity = identity_standin.IdentityStandIn(ca.server_certfile,
                                                ca.server_keyfile)
    with identity:
        identity.add_user(PLACEMENT_USER, PLACEMENT_USER[::-1], PROJECT,
                          ('service',))
        placement = embedded.EmbeddedPlacement(
            tls=embedded.TLS(
                certfile=ca.server_certfile, keyfile=ca.server_keyfile,
                cafile=ca.cafile, client_ca=ca.cafile,
                client_certfile=ca.client_certfile,
                client_keyfile=ca.client_keyfile),
            options=placement_options(identity, ca))
        with placement:
            identity.placement_url = placement.endpoint
            yield TLSCloud(ca, stranger, identity, placement, directory)


def write(directory, name, text):
    path = os.path.join(str(directory), name)
    with open(path, 'w') as f:
        f.write(text)
    return path
