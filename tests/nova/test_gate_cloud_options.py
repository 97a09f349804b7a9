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

"""The gate jobs' nova.conf lines, and the Nova options the docs name,
against the installed Nova's own options.

Every option ``.zuul.yaml``'s jobs write into a Nova config file (their
``devstack_local_conf`` post-config sections: nova.conf, nova-cpu.conf,
the fake nodes' files) must be one Nova, a library Nova loads, or this
project registers: an option nobody registers is ignored in silence by
nova-scheduler and nova-compute.
"""

import importlib
import os

import pytest

pytest.importorskip('nova')

from keystoneauth1 import loading  # noqa: E402
from oslo_config import cfg  # noqa: E402
from oslo_config import generator  # noqa: E402
import yaml  # noqa: E402

from image_type_filter import conf as itf_conf  # noqa: E402
from tests import helpers  # noqa: E402
from tests import named_options  # noqa: E402
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


def gate_nova_confs():
    """{(job, file): {section: {option: value}}} of the Nova config files
    ``.zuul.yaml``'s jobs write through devstack's post-config."""
    with open(os.path.join(helpers.REPO, '.zuul.yaml')) as f:
        jobs = [item['job'] for item in yaml.safe_load(f) if 'job' in item]
    out = {}
    for job in jobs:
        post = job.get('vars', {}).get('devstack_local_conf', {}).get(
            'post-config', {})
        for name, sections in post.items():
            if name.startswith('$NOVA_'):
                out[(job['name'], name)] = sections
    return out


def test_every_option_the_gate_writes_is_registered():
    known = registered()
    confs = gate_nova_confs()
    assert confs, 'no job writes a Nova config file'
    for (job, conf_name), sections in confs.items():
        for section, options in sections.items():
            assert section in known, (
                '%s: [%s] in %s is no group Nova or this project '
                'registers' % (job, section, conf_name))
            unknown = set(options) - known[section]
            assert not unknown, (
                '%s writes [%s] %s into %s, which Nova does not register'
                % (job, section, sorted(unknown), conf_name))


def test_the_nova_options_the_docs_name_are_novas():
    """The table tests/repository/test_cross_references.py holds the
    docs, help texts and generated configs to."""
    known = registered()
    for section, options in named_options.NOVA.items():
        assert options <= known.get(section, set()), (
            '[%s] %s: not registered by this Nova' % (
                section, sorted(options - known.get(section, set()))))
