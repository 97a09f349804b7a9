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

"""A node that boots no image on purpose: declared in its own nova.conf,
carried in Placement by the reporter, and passed by ``status``, which reads
only Placement and its own configuration."""

import json
import subprocess
import sys

from image_type_common import image_types
from image_type_demo import fleet
from tests import helpers

NODES = 'Compute nodes report image types'


def run(module, *args):
    return subprocess.run([sys.executable, '-m', module, *args],
                          capture_output=True, text=True, timeout=120,
                          env=helpers.clean_env())


def status(conf):
    proc = run('image_type_filter.cmd.main', 'status', '--config-file',
               str(conf), '-f', 'json')
    rows = {row['check']: row for row in json.loads(proc.stdout or '[]')}
    return proc.returncode, rows.get(NODES), proc


def test_status_passes_a_declared_volume_only_node_and_only_that(
        fresh_placement, tmp_path):
    scheduler = tmp_path / 'scheduler.conf'
    scheduler.write_text(fresh_placement.nova_conf_section())
    fleet.build(fresh_placement, fleet.demo_fleet()[:2])
    client = fresh_placement.client()
    # nova-compute with every format excluded reports no image type.
    fleet.create_provider(client, 'cinder-only', fleet.DEFAULT_INVENTORY)
    code, row, proc = status(scheduler)
    assert code == 2, proc.stderr
    assert ': cinder-only.' in row['details']
    # The remedies that would change the answer, not a report that
    # would add nothing under the default owner.
    for remedy in ('upgrade nova-compute', 'image_type_traits_owner = '
                   'reporter', 'volume_only = True'):
        assert remedy in row['details']

    node = tmp_path / 'nova.conf'
    base = ('[DEFAULT]\ncompute_driver = fake.FakeDriver\nstate_path = %s\n'
            '[compute]\nimage_type_exclude_list = %s\n%s'
            '[virt_capabilities]\nvolume_only = True\n')
    # Declared while nova-compute still reports raw: refused, nothing sent.
    node.write_text(base % (tmp_path, '', fresh_placement.nova_conf_section()))
    proc = run('virt_capabilities.cmd.main', 'report', '--config-file',
               str(node), '--provider', 'cinder-only')
    assert proc.returncode == 2
    assert 'image_type_exclude_list' in proc.stderr
    # Declared on a node that boots nothing: the reporter marks it.
    node.write_text(base % (tmp_path, 'raw',
                            fresh_placement.nova_conf_section()))
    proc = run('virt_capabilities.cmd.main', 'report', '--config-file',
               str(node), '--provider', 'cinder-only')
    assert proc.returncode == 0, proc.stderr
    uuid = client.list_resource_providers(name='cinder-only')[0]['uuid']
    assert image_types.VOLUME_ONLY_TRAIT in client.get_provider_traits(
        uuid)[0]
    code, row, proc = status(scheduler)
    assert code == 0, proc.stderr
    assert row['details'].startswith(
        'all 3 compute node(s) report, 1 of them declared volume-only: '
        'cinder-only')
    # Another silent node is not covered by that declaration.
    fleet.create_provider(client, 'late-node', fleet.DEFAULT_INVENTORY)
    code, row, proc = status(scheduler)
    assert code == 2 and ': late-node.' in row['details']
    assert 'cinder-only' not in row['details']
