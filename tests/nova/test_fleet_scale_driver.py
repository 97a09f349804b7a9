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

"""The fleet benchmark's scale driver, loaded as devstack loads it: from
``nova.virt`` (``benchmarks/fleet/scale_driver.py`` as
``nova.virt.itf_fleet``), with the installed Nova.

What the benchmark relies on: each nova-compute serves its group's node
count, with node UUIDs that are the same in every process (a restart finds
its nodes); nova-compute's own image-type traits are exactly the group's
formats, from Nova's ``[compute] image_type_exclude_list``; the
architecture trait only where set; and every option the fleet's local.conf
writes into a Nova config file is one Nova or the driver registers.
"""

import importlib.util
import os

import pytest

pytest.importorskip('nova')

import os_traits  # noqa: E402

from benchmarks.fleet import localconf  # noqa: E402
from benchmarks.fleet import shape  # noqa: E402
from tests import helpers  # noqa: E402
from tests.nova import test_gate_cloud_options  # noqa: E402


@pytest.fixture(scope='module')
def driver_module():
    import nova.conf  # noqa: F401  (registers Nova's options first)
    name = 'nova.virt.' + localconf.DRIVER_MODULE
    spec = importlib.util.spec_from_file_location(name, os.path.join(
        helpers.REPO, 'benchmarks', 'fleet', 'scale_driver.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def conf(driver_module):
    conf = driver_module.CONF
    yield conf
    conf.clear_override('node_count', 'fleet_driver')
    conf.clear_override('node_prefix', 'fleet_driver')
    conf.clear_override('architecture_trait', 'fleet_driver')
    conf.clear_override('image_type_exclude_list', 'compute')


def _driver(module, conf, group, count):
    section = localconf.fleet_facts({g.name: count for g in shape.GROUPS})[
        'devstack_local_conf']['post-config']['$NOVA_FAKE_CONF-%d' % (
            [g.name for g in shape.GROUPS].index(group.name) + 1)]
    for option, value in section['fleet_driver'].items():
        if option != 'architecture':  # set in the driver's own __init__
            conf.set_override(option, value or None, 'fleet_driver')
    conf.set_override('image_type_exclude_list',
                      section['compute']['image_type_exclude_list'].split(
                          ',') if section['compute'][
                          'image_type_exclude_list'] else [], 'compute')
    driver = module.FleetDriver(None)
    driver.init_host('host-%s' % group.name)
    return driver


def test_nodes_and_uuids_are_the_same_in_every_process(driver_module, conf):
    group = shape.group('qcow2')
    first = _driver(driver_module, conf, group, 7)
    again = _driver(driver_module, conf, group, 7)
    nodes = first.get_available_nodes()
    assert nodes == shape.node_names('qcow2', 7)
    assert first.get_nodenames_by_uuid() == again.get_nodenames_by_uuid()
    for uuid, node in first.get_nodenames_by_uuid().items():
        assert first.get_available_resource(node)['uuid'] == uuid
        assert shape.group_of(node) == group


@pytest.mark.parametrize('group', shape.GROUPS, ids=lambda g: g.name)
def test_nova_compute_reports_the_group_formats(driver_module, conf, group):
    driver = _driver(driver_module, conf, group, 2)
    reported = {t for t, on in driver.capabilities_as_traits().items()
                if on and t.startswith('COMPUTE_IMAGE_TYPE_')}
    assert reported == {getattr(os_traits, 'COMPUTE_IMAGE_TYPE_'
                                + f.upper()) for f in group.formats}


@pytest.mark.parametrize('group', shape.GROUPS, ids=lambda g: g.name)
def test_the_architecture_trait_only_where_nova_reports_one(
        driver_module, conf, group):
    from nova.compute import provider_tree
    driver = _driver(driver_module, conf, group, 1)
    node = driver.get_available_nodes()[0]
    tree = provider_tree.ProviderTree()
    tree.new_root(node, driver.get_available_resource(node)['uuid'])
    driver.update_provider_tree(tree, node)
    arch = {t for t in tree.data(node).traits if t.startswith('HW_ARCH_')}
    if group.nova_reports_architecture:
        assert arch == {getattr(os_traits, 'HW_ARCH_' + group.architecture
                                .upper())}
    else:
        assert arch == set()


def test_every_option_the_fleet_writes_is_registered(driver_module):
    known = test_gate_cloud_options.registered()
    known.setdefault('fleet_driver', set()).update(
        o.dest for o in driver_module.fleet_driver_opts)
    facts = localconf.fleet_facts(shape.node_counts(40))
    for name, sections in facts['devstack_local_conf'][
            'post-config'].items():
        for section, options in sections.items():
            assert set(options) <= known.get(section, set()), (
                '[%s] %s in %s: registered by no one' % (
                    section, sorted(set(options) - known.get(section,
                                                              set())),
                    name))
