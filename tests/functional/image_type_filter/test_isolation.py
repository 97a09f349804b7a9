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

"""Image-property isolation against a real Placement."""

import json
import subprocess
import sys

import pytest

from image_type_demo import fleet
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import pipeline
from tests.helpers import clean_env
from virt_capabilities import service

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 5}


def hosts_for(demo_fleet, disk_format, properties=None, image_type=True,
              rules=(fleet.TROVE_RULE,)):
    server, hosts = demo_fleet
    names = {h.uuid: h.name for h in hosts}
    client = server.client()
    filters = pipeline.RequestFilterPipeline.from_settings(
        settings.FilterSettings.defaults(
            image_type_enabled=image_type, isolation_enabled=True,
            isolation_rules=tuple(rules)), placement=client)
    found = our_filters.get_candidates(
        client, filters, our_filters.RequestSpec.for_boot(
            disk_format, RESOURCES, properties=properties or {}))
    return sorted(names[u] for u in found.provider_uuids)


def test_tagged_image_only_on_tagged_hosts(demo_fleet):
    assert hosts_for(demo_fleet, 'qcow2', fleet.TROVE_TAG) == ['trove-1']


def test_a_property_rule_works_on_plain_properties(demo_fleet):
    rules = ('trove=true:CUSTOM_TROVE',)
    assert hosts_for(demo_fleet, 'qcow2', {'trove': 'true'},
                     rules=rules) == ['trove-1']
    assert 'trove-1' not in hosts_for(demo_fleet, 'qcow2',
                                      {'trove': 'false'}, rules=rules)


def test_untagged_image_never_on_a_tagged_host(demo_fleet):
    for disk_format in ('qcow2', 'raw', 'iso'):
        assert 'trove-1' not in hosts_for(demo_fleet, disk_format)
    assert 'trove-1' not in hosts_for(demo_fleet, 'qcow2', image_type=False)
    assert 'libvirt-qcow2-1' in hosts_for(demo_fleet, 'qcow2')


def test_a_forbidden_or_other_tag_does_not_ask(demo_fleet):
    for value in ('forbidden', 'optional'):
        assert 'trove-1' not in hosts_for(
            demo_fleet, 'qcow2', {'trait:CUSTOM_TROVE': value})


def test_combined_with_image_type_both_hold(demo_fleet):
    # The Trove host is libvirt: a tagged vmdk image fits nowhere.
    assert hosts_for(demo_fleet, 'vmdk', fleet.TROVE_TAG) == []
    assert hosts_for(demo_fleet, 'vmdk', fleet.TROVE_TAG,
                     image_type=False) == ['trove-1']


def test_explain_names_the_rule(demo_fleet, tmp_path):
    server, _ = demo_fleet
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section() + '[image_isolation]\n'
                    'enabled = True\nrules = %s\n' % fleet.TROVE_RULE)
    proc = subprocess.run(
        [sys.executable, '-m', 'image_type_filter.cmd.main', 'candidates',
         '--config-file', str(conf), '--disk-format', 'qcow2', '--explain',
         '-f', 'json'], capture_output=True, text=True, env=clean_env(),
        timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = {r['name']: r for r in json.loads(proc.stdout)}
    assert rows['trove-1']['reasons'] == [
        'root_required !CUSTOM_TROVE: carries it '
        '(image_isolation rule CUSTOM_TROVE)']
    proc = subprocess.run(
        [sys.executable, '-m', 'image_type_filter.cmd.main', 'candidates',
         '--config-file', str(conf), '--disk-format', 'qcow2', '--explain',
         '--image-property', 'trait:CUSTOM_TROVE=required', '-f',
         'json'],
        capture_output=True, text=True, env=clean_env(), timeout=120)
    rows = {r['name']: r for r in json.loads(proc.stdout)}
    assert rows['trove-1']['result'] == 'candidate'
    assert 'root_required CUSTOM_TROVE: lacks it (image_isolation rule ' \
        'CUSTOM_TROVE)' in rows['libvirt-qcow2-1']['reasons']


def test_dropping_a_custom_trait_removes_it_and_nothing_else(
        placement, write_conf, unique):
    client = placement.client()
    name = 'gpu-' + unique
    uuid = fleet.create_provider(client, name, fleet.DEFAULT_INVENTORY)
    client.create_trait('CUSTOM_NOT_OURS')
    traits, generation = client.get_provider_traits(uuid)
    client.put_provider_traits(uuid, {'CUSTOM_NOT_OURS', 'HW_CPU_X86_AVX2'},
                               generation)
    base = 'compute_driver = zvm.ZVMDriver\n'
    tagged = write_conf(base + '[virt_capabilities]\ncustom_traits = '
                        'CUSTOM_GPU_A,CUSTOM_GPU_B\n', placement)
    assert service.run_once(
        lambda: service.ReportJob([tagged], [name]), 0) == 0
    traits, _ = client.get_provider_traits(uuid)
    # (No image type: nova-compute owns those, by default.)
    assert traits == {'CUSTOM_GPU_A', 'CUSTOM_GPU_B', 'CUSTOM_NOT_OURS',
                      'HW_CPU_X86_AVX2'}
    # Drop one (the same nova.conf edited, the same state_path: the
    # reporter remembers it owned it).
    fewer = write_conf(base + '[virt_capabilities]\ncustom_traits = '
                       'CUSTOM_GPU_A\n', placement, path=tagged)
    assert service.run_once(
        lambda: service.ReportJob([fewer], [name]), 0) == 0
    traits, _ = client.get_provider_traits(uuid)
    assert traits == {'CUSTOM_GPU_A', 'CUSTOM_NOT_OURS', 'HW_CPU_X86_AVX2'}


@pytest.mark.parametrize('value', ['TROVE', 'CUSTOM_lower', 'HW_CPU_X86_AVX2'])
def test_bad_custom_trait_is_exit_2_and_sends_nothing(listener, write_conf,
                                                      value):
    path = write_conf('compute_driver = zvm.ZVMDriver\n[virt_capabilities]\n'
                      'custom_traits = %s\n' % value, listener)
    proc = subprocess.run(
        [sys.executable, '-m', 'virt_capabilities.cmd.main', 'report',
         '--config-file', path], capture_output=True, text=True,
        env=clean_env(), timeout=60)
    assert proc.returncode == 2
    assert value in proc.stderr and 'custom_traits' in proc.stderr
    assert listener.requests == []
