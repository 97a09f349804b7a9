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

"""The rollback's order on Nova's own nova-scheduler.

nova-scheduler is started as Nova's harness starts it (the service, its
manager, its host manager loading ``available_filters``) on the nova.conf
nova-scheduler has at each step of upgrade.rst's rollback
(``rollback_conf``: the install guide's filters block with isolation and
an image-metadata family, then Nova's own mechanisms beside it, then the
filters' lines out), with the package importable or not
("uninstalled": every import of ``image_type_filter`` fails as it does
once pip removed it). The documented order starts at every step; the
package first does not, nor a ``ImageTypeRebuildFilter`` left in
``enabled_filters``.
"""

import importlib.abc
import sys

import pytest

pytest.importorskip('nova')

from nova import exception as nova_exception  # noqa: E402
from nova import test  # noqa: E402
from nova.tests.functional import fixtures as func_fixtures  # noqa: E402

from image_type_filter import conf as itf_conf  # noqa: E402
from image_type_filter.nova import integration  # noqa: E402
from tests import helpers  # noqa: E402

NOVA_FILTERS = ('ComputeFilter', 'ComputeCapabilitiesFilter',
                'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
                'ServerGroupAffinityFilter')
#: The install guide's block (doc/source/install/scheduler.rst, "On the
#: scheduler: inside Nova"), with isolation and one image-metadata family.
FILTERS_ON = {
    'filter_scheduler': {
        'available_filters': ['nova.scheduler.filters.all_filters',
                              'image_type_filter.nova.all_filters'],
        'enabled_filters': ','.join(NOVA_FILTERS
                                    + ('ImageTypeRebuildFilter',)),
    },
    'scheduler': {'filter_hosts_by_image_type_support': 'True'},
    'image_type_filter': {'unknown_format': 'ignore'},
    'image_isolation': {'enabled': 'True', 'rules': 'CUSTOM_TROVE'},
    'image_metadata_prefilter': {'families': 'storage_bus'},
}
#: Nova's own scheduler and nothing of ours.
FILTERS_OFF = {
    'filter_scheduler': {
        'available_filters': ['nova.scheduler.filters.all_filters'],
        'enabled_filters': ','.join(NOVA_FILTERS),
    },
    'scheduler': {},
}
#: Nova's own mechanism for each thing the filters do, where Nova has one:
#: what upgrade.rst's rollback turns on before the filters' lines go.
NOVA_MECHANISMS = {
    # The image's disk_format as a required COMPUTE_IMAGE_TYPE_* trait.
    'query_placement_for_image_type_support': 'True',
    # Aggregates whose metadata requires a trait are forbidden to
    # requests that do not require it.
    'enable_isolated_aggregate_filtering': 'True',
    # hw_disk_bus and the other image properties Nova maps to traits.
    'image_metadata_prefilter': 'True',
}
PACKAGE = 'image_type_filter'
#: The groups of the scheduler's nova.conf the scheduler's start reads:
#: the rest (databases, the message bus, credentials) is the harness's.
GROUPS = ('filter_scheduler', 'scheduler', 'image_type_filter',
          'image_isolation', 'image_metadata_prefilter')


def rollback_conf(filters_on, nova_mechanisms):
    """nova-scheduler's sections at a step of upgrade.rst's rollback."""
    sections = {group: dict(values) for group, values in (
        FILTERS_ON if filters_on else FILTERS_OFF).items()}
    if nova_mechanisms:
        sections['scheduler'].update(NOVA_MECHANISMS)
    return sections


class Uninstalled(importlib.abc.MetaPathFinder):
    """Every import of the package fails, as after ``pip uninstall``."""

    def find_spec(self, name, path=None, target=None):
        if name == PACKAGE or name.startswith(PACKAGE + '.'):
            raise ModuleNotFoundError("No module named '%s'" % name,
                                      name=name)
        return None


class RollbackOrder(test.TestCase):
    def _clear_attrs(self):
        pass  # see tests/nova/base.py

    def setUp(self):
        super().setUp()
        self.useFixture(func_fixtures.PlacementFixture())
        self.addCleanup(helpers.uninstall_filters, integration)
        itf_conf.register_nova_opts(test.CONF)

    def configure(self, filters_on, nova_mechanisms):
        """The gate's nova-scheduler nova.conf at that step, as flags."""
        sections = rollback_conf(filters_on, nova_mechanisms)
        for group in GROUPS:
            for key, value in sections.get(group, {}).items():
                opt = test.CONF[group]._group._opts[key]['opt']
                self.flags(**{key: opt.type(value) if not isinstance(
                    value, list) else value, 'group': group})
        return sections

    def uninstall(self):
        saved = {name: module for name, module in sys.modules.items()
                 if name == PACKAGE or name.startswith(PACKAGE + '.')}
        for name in saved:
            del sys.modules[name]
        finder = Uninstalled()
        sys.meta_path.insert(0, finder)

        def reinstall():
            sys.meta_path.remove(finder)
            sys.modules.update(saved)
        self.addCleanup(reinstall)

    def test_nova_mechanisms_beside_the_filters_start(self):
        self.configure(filters_on=True, nova_mechanisms=True)
        self.start_service('scheduler')
        self.assertTrue(integration.installed_filters())
        self.assertTrue(test.CONF.scheduler.enable_isolated_aggregate_filtering)

    def test_with_the_lines_out_it_starts_without_the_filters(self):
        self.configure(filters_on=False, nova_mechanisms=True)
        self.start_service('scheduler')
        self.assertEqual([], integration.installed_filters())

    def test_with_the_package_gone_too_it_starts(self):
        self.configure(filters_on=False, nova_mechanisms=True)
        self.uninstall()
        self.start_service('scheduler')
        self.assertNotIn(PACKAGE, sys.modules)

    def test_the_package_first_stops_nova_scheduler(self):
        self.configure(filters_on=True, nova_mechanisms=False)
        self.uninstall()
        exc = self.assertRaises(ImportError, self.start_service, 'scheduler')
        self.assertIn("No module named '%s" % PACKAGE, str(exc))

    def test_the_rebuild_filter_left_enabled_stops_nova_scheduler(self):
        self.configure(filters_on=False, nova_mechanisms=True)
        self.flags(enabled_filters=list(
            test.CONF.filter_scheduler.enabled_filters)
            + [integration.HOST_FILTER], group='filter_scheduler')
        self.uninstall()
        exc = self.assertRaises(nova_exception.SchedulerHostFilterNotFound,
                                self.start_service, 'scheduler')
        self.assertIn(integration.HOST_FILTER, str(exc))
