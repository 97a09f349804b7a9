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

"""The gate's nova.conf files, and the Nova options the docs name, against
the installed Nova's own options.

Every option the gate writes into a group Nova, a library Nova loads, or
this project registers must be one of theirs: an option nobody registers
is ignored in silence by nova-scheduler and nova-compute (the gate once
set a scheduler option that no longer existed).
"""

import importlib

import pytest

pytest.importorskip('nova')

from keystoneauth1 import loading  # noqa: E402
from oslo_config import cfg  # noqa: E402
from oslo_config import generator  # noqa: E402

from image_type_filter import conf as itf_conf  # noqa: E402
from tests import named_options  # noqa: E402
from tests.unit.gate_cloud import test_gate_cloud  # noqa: E402
from virt_capabilities import conf as vc_conf  # noqa: E402

#: The namespaces oslo-config-generator reads for Nova's sample nova.conf
#: that hold what the gate writes (Nova's, oslo.log's [DEFAULT] log_file and
#: debug, oslo.messaging's transport_url and [oslo_messaging_rabbit], the
#: auth middleware's and oslo.concurrency's sections).
NAMESPACES = ('nova.conf', 'oslo.log', 'oslo.messaging', 'oslo.concurrency',
              'keystonemiddleware.auth_token', 'oslo.db')
def registered():
    """{group: option names} of Nova's namespaces, this project's, and the
    privsep contexts nova-compute loads (each registers its own section on
    oslo.config's global CONF when imported)."""
    out = {}
    listed = generator._list_opts(NAMESPACES)
    listed.append(('ours', list(itf_conf.list_opts())
                   + list(vc_conf.list_opts())))
    for _, groups in listed:
        for group, opts in groups:
            name = getattr(group, 'name', group) or 'DEFAULT'
            out.setdefault(name, set()).update(o.dest for o in opts)
    for module in ('nova.privsep', 'os_brick.privileged',
                   'vif_plug_ovs.privsep'):
        importlib.import_module(module)
    for name in cfg.CONF:
        group = cfg.CONF[name]
        if isinstance(group, cfg.ConfigOpts.GroupAttr) and \
                'helper_command' in group:
            out.setdefault(name, set()).update(group)
    return out


def plugin_options(auth_type):
    """What keystoneauth registers in a group once it reads ``auth_type``
    there (keystonemiddleware and Nova load the plugin so)."""
    return {o.dest for o in loading.get_auth_plugin_conf_options(auth_type)}


def test_every_option_the_gate_writes_is_registered(tmp_path):
    known = registered()
    for conf_name, sections in test_gate_cloud.gate_nova_confs(
            tmp_path).items():
        for section, options in sections.items():
            if 'auth_type' in options:
                known.setdefault(section, set()).update(
                    plugin_options(options['auth_type']))
            assert section in known, (
                '[%s] in the %s nova.conf is no group Nova or this project '
                'registers' % (section, conf_name))
            unknown = set(options) - known[section]
            assert not unknown, (
                'the gate writes [%s] %s into the %s nova.conf, which Nova '
                'does not register' % (section, sorted(unknown), conf_name))


def test_the_nova_options_the_unit_test_allows_are_novas():
    known = registered()
    for section, options in \
            test_gate_cloud.NOVA_OPTIONS_IN_SHARED_GROUPS.items():
        assert options <= known.get(section, set()), section


def test_the_nova_options_the_docs_name_are_novas():
    """The table tests/repository/test_cross_references.py holds the
    docs, help texts and generated configs to."""
    known = registered()
    for section, options in named_options.NOVA.items():
        assert options <= known.get(section, set()), (
            '[%s] %s: not registered by this Nova' % (
                section, sorted(options - known.get(section, set()))))
