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

"""The fleet's local.conf, rendered as the container renders it: the gate
job's controller from devstack's snapshot and the gate's own renderer,
the fleet's facts over it (the render once called a function the gate's
renderer no longer had, and only a run in the container found out)."""

import configparser

from benchmarks.fleet import gate
from benchmarks.fleet import localconf
from benchmarks.fleet import shape
from tests.unit.gate_cloud.test_localconf import trees  # noqa: F401


def test_the_fleet_is_the_gate_job_s_controller_sized_for_a_fleet(
        trees, tmp_path):  # noqa: F811
    devstack, tempest = trees
    path = tmp_path / 'local.conf'
    counts = shape.node_counts(40)
    variables = gate.render_localconf(
        devstack, tempest, path, '10.254.251.2', 'file:///opt/img.raw',
        '/opt/git', localconf.fleet_facts(counts))
    localrc = variables['devstack_localrc']
    assert localrc['HOST_IP'] == localrc['SERVICE_HOST'] == '10.254.251.2'
    assert localrc['NUMBER_FAKE_NOVA_COMPUTE'] == len(shape.GROUPS)
    text = path.read_text()
    # devstack's writer wrote it: the plugin line, and each group's
    # nova-compute's configuration with its node count.
    assert 'enable_plugin %s file://%s' % (
        gate.PLUGIN_NAME, gate.PLUGIN_DIR) in text
    for service in localconf.SERVICES_OFF:
        assert 'disable_service %s' % service in text
    for i, group in enumerate(shape.GROUPS, start=1):
        header = '[[post-config|$NOVA_FAKE_CONF-%d]]' % i
        section = text.split(header, 1)[1].split('[[', 1)[0]
        conf = configparser.ConfigParser()
        conf.read_string(section)
        assert conf['fleet_driver']['node_count'] == str(counts[group.name])
