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

"""[placement] options: keystoneauth1's own auth, session and adapter options.

A compute node reuses the ``[placement]`` section nova.conf already has, so it
needs no second credentials file. Connection errors and 502/503/504 answers are
retried by keystoneauth1 itself (``connect_retries``, ``status_code_retries``),
with one warning per attempt. Every request has a timeout (``timeout``,
default 30 s here; keystoneauth1's own default is none).
"""

from oslo_config import cfg

from image_type_common.conf import keystoneauth

placement_group = cfg.OptGroup(
    'placement', title='Placement service options',
    help='How to reach the Placement API. Any keystoneauth1 auth plugin '
         'works; without Keystone use ``auth_type = admin_token`` with '
         '``endpoint`` and ``token``.')

DEFAULT_SERVICE_TYPE = 'placement'
#: How many times keystoneauth1 tries again after a connection error
#: (``connect_retries``) and after a 502/503/504 answer
#: (``status_code_retries``); its own default is none.
DEFAULT_RETRIES = 3
#: Seconds one Placement request may take (keystoneauth1's ``timeout``,
#: which is unbounded by default): a Placement that accepts the connection
#: and never answers ends every command with one line instead of a hang.
DEFAULT_TIMEOUT = 30


def register_opts(conf):
    keystoneauth.register_opts(conf, placement_group, DEFAULT_SERVICE_TYPE,
                               DEFAULT_TIMEOUT, DEFAULT_RETRIES)


def apply_retries(adapter):
    """The same retries on an adapter these options did not build
    (openstacksdk's placement proxy, from clouds.yaml or ``OS_*``), where
    its own configuration left them unset."""
    for name in keystoneauth.RETRY_OPTIONS:
        if getattr(adapter, name, None) is None:
            setattr(adapter, name, DEFAULT_RETRIES)


def list_opts():
    return keystoneauth.list_opts(placement_group, 'password', 'admin_token')
