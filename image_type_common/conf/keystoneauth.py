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

"""``[placement]`` and ``[ironic]``: keystoneauth1's own auth, session and
adapter options, as nova.conf has them.

The sections nova-compute reaches Placement and Ironic with, so no second
credentials file; one ``Section`` registers both, with this project's
defaults on top of keystoneauth1's (which are no timeout, no retries).
"""

import dataclasses

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from image_type_common.conf import fresh_group

RETRIABLE_STATUS_CODES = [502, 503, 504]
#: keystoneauth1's retry options this project sets: how many times it tries
#: again after a connection error and after a 502/503/504 answer.
RETRY_OPTIONS = ('connect_retries', 'status_code_retries')
DEFAULT_RETRIES = 3
#: Seconds one request may take, to Placement, Ironic, Keystone, Nova or
#: Glance, unless the configuration sets a timeout: a service that accepts
#: the connection and never answers ends every command with one line
#: instead of a hang.
DEFAULT_TIMEOUT = 30


@dataclasses.dataclass(frozen=True)
class Section:
    """One service's section: its group, service type, and the auth
    plugins whose options the sample config lists."""

    group: cfg.OptGroup
    service_type: str
    auth_plugins: tuple

    def register_opts(self, conf):
        """Register the group with keystoneauth1's options and our defaults."""
        name = self.group.name
        conf.register_group(fresh_group(self.group))
        ks_loading.register_session_conf_options(conf, name)
        ks_loading.register_auth_conf_options(conf, name)
        ks_loading.register_adapter_conf_options(conf, name,
                                                 include_deprecated=False)
        defaults = {'service_type': self.service_type,
                    'valid_interfaces': ['internal', 'public'],
                    'timeout': DEFAULT_TIMEOUT,
                    'retriable_status_codes': RETRIABLE_STATUS_CODES}
        defaults.update(dict.fromkeys(RETRY_OPTIONS, DEFAULT_RETRIES))
        for option, value in defaults.items():
            conf.set_default(option, value, group=name)

    def list_opts(self):
        """The group's options for the sample config: the session, auth
        and adapter options, and those of each named auth plugin."""
        opts = ks_loading.get_session_conf_options() + \
            ks_loading.get_auth_common_conf_options()
        for plugin in self.auth_plugins:
            opts += ks_loading.get_auth_plugin_conf_options(plugin)
        opts += ks_loading.get_adapter_conf_options(include_deprecated=False)
        unique = {opt.dest: opt for opt in opts}
        return {self.group: sorted(unique.values(), key=lambda o: o.dest)}


placement = Section(cfg.OptGroup(
    'placement', title='Placement service options',
    help='How to reach the Placement API. Any keystoneauth1 auth plugin '
         'works; without Keystone use ``auth_type = admin_token`` with '
         '``endpoint`` and ``token``.'), 'placement',
    ('password', 'admin_token'))

ironic = Section(cfg.OptGroup(
    'ironic', title='Ironic (Bare Metal) service options',
    help='How nova-compute\'s ironic driver reaches Ironic, read from its '
         'own nova.conf. Used only with ``compute_driver = '
         'ironic.IronicDriver``: the reporter keeps an ironic node\'s '
         'custom traits as the Ironic node\'s traits, which nova-compute '
         'copies to the node\'s resource provider. Any keystoneauth1 auth '
         'plugin works; an Ironic without Keystone takes ``auth_type = '
         'none`` with ``endpoint_override``.'), 'baremetal',
    ('password', 'none'))
