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

"""A service's section of keystoneauth1 options, as nova.conf has them.

nova-compute reaches Placement (``[placement]``) and Ironic (``[ironic]``)
with keystoneauth1's own auth, session and adapter options; the reporter
and the scheduler side read the same sections, registered here once with
the defaults this project sets on top of keystoneauth1's: the service
type, internal then public endpoints, a timeout on every request (none by
default in keystoneauth1) and retries of connection errors and of
502/503/504 answers (none by default either).
"""

from keystoneauth1 import loading as ks_loading

from image_type_common.conf.groups import fresh_group

RETRIABLE_STATUS_CODES = [502, 503, 504]
#: keystoneauth1's retry options this project sets.
RETRY_OPTIONS = ('connect_retries', 'status_code_retries')


def register_opts(conf, group, service_type, timeout, retries):
    """Register ``group`` with keystoneauth1's options and our defaults."""
    conf.register_group(fresh_group(group))
    ks_loading.register_session_conf_options(conf, group.name)
    ks_loading.register_auth_conf_options(conf, group.name)
    ks_loading.register_adapter_conf_options(conf, group.name,
                                             include_deprecated=False)
    defaults = {'service_type': service_type,
                'valid_interfaces': ['internal', 'public'],
                'timeout': timeout,
                'retriable_status_codes': RETRIABLE_STATUS_CODES}
    defaults.update(dict.fromkeys(RETRY_OPTIONS, retries))
    for name, value in defaults.items():
        conf.set_default(name, value, group=group.name)


def list_opts(group, *auth_plugins):
    """``group``'s options for the sample config: the session, auth and
    adapter options, and those of each named auth plugin."""
    opts = ks_loading.get_session_conf_options() + \
        ks_loading.get_auth_common_conf_options()
    for plugin in auth_plugins:
        opts += ks_loading.get_auth_plugin_conf_options(plugin)
    opts += ks_loading.get_adapter_conf_options(include_deprecated=False)
    unique = {opt.dest: opt for opt in opts}
    return {group: sorted(unique.values(), key=lambda o: o.dest)}
