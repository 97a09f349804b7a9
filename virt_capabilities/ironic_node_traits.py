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

"""An ironic node's traits, kept where Nova takes them from: the Ironic node.

Nova's ironic driver replaces the whole trait set of an ironic node's
resource provider with the Ironic node's own on every update, so for that
driver (``NodePlan.on_ironic_node``) the reporter writes nothing to
Placement: ``IronicNodeTraits`` is its trait store
(``virt_capabilities.reporter``), which reads and writes each provider's
traits as the Ironic node of the same uuid, one trait a request, through
openstacksdk's baremetal proxy. Why, what it owns there, and how Ironic is
reached and fails: doc/source/admin/trait-ownership.rst ("Ironic nodes").
"""

import dataclasses
import time

from keystoneauth1 import exceptions as ks_exc

from image_type_common import connection
from image_type_common import exceptions
from image_type_common import text
from image_type_common import tls
from virt_capabilities import providers

#: The Bare Metal API microversion that added node traits (Queens): the
#: Ironic must offer it; openstacksdk sends it with every trait request.
TRAITS_MICROVERSION = (1, 37)
#: The node fields read: nothing else of the node is ever looked at.
NODE_FIELDS = ('uuid', 'name', 'traits')
#: How much of Ironic's own error text a message quotes.
_MAX_FAULT = 200


class IronicUnavailable(exceptions.Error):
    """Ironic (or the Keystone in front of it) could not be reached or
    did not answer: nothing more was written (exit 1)."""


class IronicError(exceptions.Error):
    """Ironic answered a request with an error (exit 1)."""


class IronicRefused(exceptions.CredentialsRefused):
    """Ironic (or Keystone) refused the ``[ironic]`` credentials: a
    configuration to fix, as for Placement (exit 2)."""


class NodeNotFound(IronicError, exceptions.ProviderNotFound):
    """No Ironic node has this uuid (any more): the provider is gone
    too, as nova-compute will find."""


class IronicNodeTraits:
    """The trait store over Ironic nodes (the module says how), over the
    session of nova.conf's ``[ironic]`` or of the cloud (its retries: the
    admin page the module names). One trait a request, so that a trait
    somebody else sets or removes meanwhile is neither lost nor put back.
    Failures on the way (Keystone, TLS, no answer) are worded as
    Placement's are (``connection.NamedServiceAdapter``), naming Ironic."""

    kind = 'Ironic node'
    #: No answer, or a server error: the trait of the request that
    #: failed may have been set (those before it were).
    outcome_unknown = (IronicUnavailable,)

    def __init__(self, conn, settings):
        self._conn = conn
        # The Keystone steps go through an undiscovered client of the same
        # configuration (``NamedServiceAdapter.sdk_proxy``).
        self._named = connection.NamedServiceAdapter(
            conn.config.get_session_client('baremetal'), settings, 'Ironic',
            IronicUnavailable, IronicUnavailable, IronicRefused)
        self._proxy = None
        self._base = None

    def endpoint(self):
        """Ironic's versioned endpoint (``.../v1/``), found once: the
        token and catalogue first (Keystone's steps, failures naming
        Keystone), then Ironic's version document."""
        if self._base:
            return self._base
        listed, proxy, data = self._named.sdk_proxy(
            self._conn, 'set [ironic] endpoint_override, or check the '
            'catalogue\'s baremetal entry')
        if data.max_microversion and \
                tuple(data.max_microversion) < TRAITS_MICROVERSION:
            raise IronicError(
                'Ironic at %s offers Bare Metal API microversions up to '
                '%s.%s: node traits need %s.%s' % (
                    listed, *data.max_microversion, *TRAITS_MICROVERSION))
        self._proxy, self._base = proxy, data.url.rstrip('/') + '/'
        return self._base

    def _call(self, method, path, request):
        """``request(proxy)``, one openstacksdk call; its failures as
        this module's errors, naming the request."""
        from openstack import exceptions as sdk_exc

        self.endpoint()
        try:
            return request(self._proxy)
        except sdk_exc.HttpException as exc:
            raise self._failed(exc, method, path) from exc
        except (ks_exc.ConnectionError,
                ks_exc.RetriableConnectionFailure) as exc:
            raise self._named.connection_error(self._base, exc) from exc
        except ks_exc.ClientException as exc:
            raise self._named.keystone_error(exc) from exc

    def _failed(self, exc, method, path):
        status, what = exc.status_code, '%s %s' % (method, path)
        fault = text.one_line(exc.details or '')
        if len(fault) > _MAX_FAULT:
            fault = fault[:_MAX_FAULT] + '...'
        if status == 404:
            return NodeNotFound('Ironic at %s has no node %s any more'
                                % (self._base, path.split('/')[1]))
        if status in (401, 403):
            return IronicRefused(
                'Ironic at %s refused the [ironic] credentials (%d) on %s: '
                'its user needs a role Ironic\'s baremetal:node:traits:set '
                'and :delete policies allow (by default: service, in the '
                'service project)' % (self._base, status, what))
        if status >= 500:
            return IronicUnavailable('Ironic at %s answered %s to %s: %s'
                                     % (self._base, status, what, fault))
        return IronicError('Ironic at %s answered %d to %s: %s' % (
            self._base, status, what, fault))

    def get_node(self, ident, missing_ok=True):
        """The node of this uuid or name (openstacksdk's Node: ``id``,
        ``name``, ``traits``); when Ironic has none, None, or with
        ``missing_ok`` false NodeNotFound."""
        try:
            return self._call('GET', 'nodes/%s' % ident, lambda proxy:
                              proxy.get_node(ident, fields=NODE_FIELDS))
        except NodeNotFound:
            if not missing_ok:
                raise
            return None

    def add_trait(self, node_uuid, trait):
        self._call('PUT', 'nodes/%s/traits/%s' % (node_uuid, trait),
                   lambda proxy: proxy.add_node_trait(node_uuid, trait))

    def remove_trait(self, node_uuid, trait):
        """Remove one trait; nothing to do when it was gone already (Ironic
        answers 404, which openstacksdk's ``ignore_missing`` does not
        take for that: the node is asked whether it is the one gone)."""
        try:
            self._call('DELETE', 'nodes/%s/traits/%s' % (node_uuid, trait),
                       lambda proxy: proxy.remove_node_trait(
                           node_uuid, trait, ignore_missing=False))
        except NodeNotFound:
            if self.get_node(node_uuid) is None:
                raise

    def read(self, uuid):
        """(traits, traits): the second is what ``write`` compares with
        (Ironic has no generation, and needs none: each request changes
        one trait)."""
        node = self.get_node(uuid, missing_ok=False)
        traits = frozenset(node.traits or ())
        return traits, traits

    def write(self, uuid, traits, generation):
        """Only the difference from the read: every other trait is left as
        Ironic has it now. A request that fails stops the write there
        (``reporter``'s docstring says what the reporter then records)."""
        for trait in sorted(set(traits) - set(generation)):
            self.add_trait(uuid, trait)
        for trait in sorted(set(generation) - set(traits)):
            self.remove_trait(uuid, trait)

    def create_trait(self, name):
        """Nothing to do: Ironic takes any well-formed custom trait."""

    def in_sync(self, tokens):
        return None  # no query finds nodes by traits: each is read

    def resolve_with_wait(self, refs, wait=0.0, sleep=time.sleep):
        """The refs are Ironic nodes' uuids or names (a node's uuid is its
        provider's); one Ironic has no node of comes back with its source
        saying so."""
        def lookup(refs):
            found = [(ref, self.get_node(ref.value)) for ref in refs]
            return ([node.id for _, node in found if node],
                    [ref for ref, node in found if node is None])
        uuids, missing = providers.wait_for(
            lookup, refs, self.kind, wait, sleep,
            unavailable=IronicUnavailable)
        return uuids, [dataclasses.replace(
            ref, source='%s; Ironic at %s has no such node' % (
                ref.source, self.endpoint()))
            for ref in missing]


def adapter_from_conf(conf):
    """A keystoneauth1 Adapter from nova.conf's ``[ironic]`` options."""
    return connection.adapter_from_conf(
        conf, 'ironic', 'Ironic',
        'the reporter of an ironic node reaches Ironic as nova-compute '
        'does, with nova.conf\'s [ironic] section (or give --os-cloud, or '
        'OS_* variables)')


def store_for(conf, cloud=None):
    """The trait store, reaching Ironic as the Placement client is chosen:
    ``--os-cloud`` wins; else nova.conf's ``[ironic]`` when it names an
    auth plugin; else the ``OS_*`` environment; else a ConfigError
    (``adapter_from_conf``'s).
    From ``[ironic]``, the openstacksdk Connection is built as
    nova-compute's ironic driver builds its own: the section's session
    (checked by ``adapter_from_conf``), and its adapter options read by
    openstacksdk (``oslo_conf``)."""
    import openstack.connection

    if cloud or (not conf.ironic.auth_type
                 and connection.has_cloud_environment()):
        return IronicNodeTraits(connection.connect(cloud, 'Ironic'),
                                tls.CLOUDS_YAML)
    return IronicNodeTraits(openstack.connection.Connection(
        session=adapter_from_conf(conf).session, oslo_conf=conf),
        tls.section('ironic'))
