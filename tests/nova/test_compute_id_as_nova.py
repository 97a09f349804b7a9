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

"""The reporter finds nova-compute's node uuid where nova-compute finds it,
and refuses what it refuses: compared with Nova's own
``nova.virt.node.read_local_node_uuid`` on the same files."""

import os

import pytest

pytest.importorskip('nova')

import fixtures  # noqa: E402
from nova import exception  # noqa: E402
from nova.tests import fixtures as nova_fixtures  # noqa: E402
from nova.virt import node as nova_node  # noqa: E402
from oslo_config import cfg  # noqa: E402
import testtools  # noqa: E402

from image_type_common import exceptions  # noqa: E402
from virt_capabilities import plan  # noqa: E402

NODE = '7d1a5f0e-2b3c-4d5e-8f90-a1b2c3d4e5f6'
OTHER = '0b5e2c1d-9a8f-4e7d-a6c5-b4a3f2e1d0c9'
#: compute_id contents beside the first config file, beside the second,
#: and under state_path (None: no file there).
LAYOUTS = {
    'none': (None, None, None),
    'state-path': (None, None, NODE + '\n'),
    'beside-first-conf': (NODE, None, None),
    'beside-second-conf': (None, NODE, None),
    'everywhere-alike': (NODE, NODE + '\n', ' %s ' % NODE),
    'disagree': (NODE, None, OTHER),
    'disagree-confs': (NODE, OTHER, None),
    'empty': (None, None, ''),
    'blank': ('\n \n', None, None),
    'words': (None, None, 'node-1\n'),
    'upper': (None, None, NODE.upper()),
    'braces': (None, None, '{%s}' % NODE),
    'hex': (NODE.replace('-', ''), None, None),
    'junk-within-40': (None, None, NODE + '\nx'),
    'junk-after-40': (None, None, NODE + '\n' * 4 + 'x'),
    'not-utf8': (None, None, b'\xff\xfe'),
}


class TestComputeIdAsNovaReadsIt(testtools.TestCase):
    """Nova's own test of node.py is a testtools case with its ConfFixture
    (nova/tests/unit/virt/test_node.py): this one lays out the same
    files for both and compares."""

    def setUp(self):
        super().setUp()
        self.useFixture(nova_fixtures.ConfFixture(cfg.CONF))
        nova_node.LOCAL_NODE_UUID = None

    def nova_answer(self, configs, state_path):
        cfg.CONF.set_override('state_path', state_path)
        cfg.CONF.set_override('config_file', configs)
        try:
            return nova_node.read_local_node_uuid()
        except exception.InvalidNodeConfiguration:
            return 'refused'

    def our_answer(self, configs):
        try:
            refs = plan.NodePlan.from_files(configs).refs
        except exceptions.ConfigError:
            return 'refused'
        [ref] = refs
        return ref.value if ref.source.startswith('compute_id') else None

    def test_every_layout(self):
        for name, contents in LAYOUTS.items():
            root = self.useFixture(fixtures.TempDir()).path
            dirs = [os.path.join(root, d) for d in ('etc', 'etc-compute',
                                                    'state')]
            for directory, content in zip(dirs, contents, strict=True):
                os.makedirs(directory)
                if content is not None:
                    mode = 'wb' if isinstance(content, bytes) else 'w'
                    with open(os.path.join(directory, 'compute_id'),
                              mode) as f:
                        f.write(content)
            configs = [os.path.join(dirs[0], 'nova.conf'),
                       os.path.join(dirs[1], 'nova-compute.conf')]
            with open(configs[0], 'w') as f:
                f.write('[DEFAULT]\ncompute_driver = fake.FakeDriver\n'
                        'host = by-name\nstate_path = %s\n' % dirs[2])
            with open(configs[1], 'w') as f:
                f.write('[DEFAULT]\n')
            self.assertEqual(self.nova_answer(configs, dirs[2]),
                             self.our_answer(configs), name)
