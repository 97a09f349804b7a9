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

"""[ironic] options: how nova-compute's ironic driver reaches Ironic.

The reporter of an ironic node writes its traits to the Ironic node (see
``virt_capabilities.ironic_node_traits``), and reaches Ironic the way
nova-compute's ironic driver does: with the keystoneauth1 auth, session and
adapter options of nova.conf's ``[ironic]`` section, which it already has.
Every request has a timeout (``timeout``, 30 s here unless nova.conf sets
one; keystoneauth1's own default, and so nova-compute's, is none).
"""

from oslo_config import cfg

from image_type_common.conf import keystoneauth

ironic_group = cfg.OptGroup(
    'ironic', title='Ironic (Bare Metal) service options',
    help='How nova-compute\'s ironic driver reaches Ironic, read from its '
         'own nova.conf. Used only with ``compute_driver = '
         'ironic.IronicDriver``: the reporter keeps an ironic node\'s '
         'custom traits as the Ironic node\'s traits, which nova-compute '
         'copies to the node\'s resource provider. Any keystoneauth1 auth '
         'plugin works; an Ironic without Keystone takes ``auth_type = '
         'none`` with ``endpoint_override``.')

DEFAULT_SERVICE_TYPE = 'baremetal'
DEFAULT_RETRIES = 3
#: Seconds one Ironic request may take, unless nova.conf sets ``timeout``.
DEFAULT_TIMEOUT = 30


def register_opts(conf):
    keystoneauth.register_opts(conf, ironic_group, DEFAULT_SERVICE_TYPE,
                               DEFAULT_TIMEOUT, DEFAULT_RETRIES)


def list_opts():
    return keystoneauth.list_opts(ironic_group, 'password', 'none')
