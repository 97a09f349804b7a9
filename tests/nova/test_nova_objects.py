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

"""The filters on Nova's own RequestSpec, ImageMeta and Flavor objects,
installed into nova-scheduler's request-filter list the documented way."""

import os
import subprocess
import sys

import pytest

pytest.importorskip('nova')

from nova import exception as nova_exception  # noqa: E402
from nova import objects  # noqa: E402
from nova import test  # noqa: E402
from nova.scheduler import request_filter as nova_request_filter  # noqa: E402

from image_type_common import exceptions  # noqa: E402
from image_type_common import image_metadata  # noqa: E402
from image_type_filter import conf as itf_conf  # noqa: E402
import image_type_filter.nova  # noqa: E402
from image_type_filter.nova import compat  # noqa: E402
from image_type_filter.nova import integration  # noqa: E402
from tests import helpers  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
RULES = ['os_distro=rhel:CUSTOM_RHEL', 'CUSTOM_TROVE', 'CUSTOM_GPU']


def nova_spec(image=None, extra_specs=None, is_bfv=False, **fields):
    objects.register_all()
    spec = objects.RequestSpec(is_bfv=is_bfv, **fields)
    if image is not None:
        spec.image = objects.ImageMeta.from_dict(image)
    spec.flavor = objects.Flavor(extra_specs=extra_specs or {})
    return spec


class NovaTestCase(test.NoDBTestCase):
    def _clear_attrs(self):
        pass  # see tests/nova/base.py

    def setUp(self):
        super().setUp()
        self.addCleanup(helpers.uninstall_filters, integration)
        itf_conf.register_nova_opts(test.CONF)
        # As README's nova.conf: isolation needs the rebuild filter.
        self.flags(enabled_filters=list(
            test.CONF.filter_scheduler.enabled_filters) + [
                integration.HOST_FILTER], group='filter_scheduler')

    def install(self, options=None):
        for (group, name), value in (options or {}).items():
            self.flags(**{name: value, 'group': group})
        image_type_filter.nova.all_filters()
        return integration.installed_filters()

    def run_ours(self, spec):
        return [f(None, spec) for f in integration.installed_filters()]


class TestOnNovaObjects(NovaTestCase):
    def test_tags_and_kept_properties_on_real_nova_objects(self):
        self.install({('scheduler', 'filter_hosts_by_image_type_support'):
                        True, ('image_isolation', 'enabled'): True,
                        ('image_isolation', 'rules'): RULES})
        spec = nova_spec({'disk_format': 'raw', 'properties': {
            'os_distro': 'rhel', 'trait:CUSTOM_TROVE': 'required'}})
        self.assertEqual([True], self.run_ours(spec))
        self.assertEqual({'COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_RHEL',
                          'CUSTOM_TROVE'}, spec.root_required)
        self.assertIn('CUSTOM_GPU', spec.root_forbidden)

    def test_a_tagged_flavor_asks_too(self):
        self.install({('image_isolation', 'enabled'): True,
                        ('image_isolation', 'rules'): RULES})
        spec = nova_spec({'disk_format': 'raw', 'properties': {}},
                         extra_specs={'trait:CUSTOM_GPU': 'required'})
        self.run_ours(spec)
        self.assertEqual({'CUSTOM_GPU'}, spec.root_required)
        self.assertEqual({'CUSTOM_RHEL', 'CUSTOM_TROVE'},
                         spec.root_forbidden)

    def test_odd_nova_requests_never_raise(self):
        self.install({('scheduler', 'filter_hosts_by_image_type_support'):
                        True, ('image_isolation', 'enabled'): True,
                        ('image_isolation', 'rules'): RULES})
        odd = [
            nova_spec(),                                  # no image at all
            nova_spec({'properties': {}}),                # no disk_format
            nova_spec({'disk_format': None}),
            nova_spec({'disk_format': 'raw\n&x=1', 'properties': {
                'os_distro': 'ubuntu', 'hw_machine_type': 'q35'}}),
            nova_spec({'disk_format': 'vhd'}, is_bfv=True),
        ]
        for spec in odd:
            self.run_ours(spec)
            self.assertTrue({'CUSTOM_RHEL', 'CUSTOM_TROVE',
                             'CUSTOM_GPU'} <= spec.root_forbidden)
        self.assertEqual(set(), odd[-1].root_required)  # volume-backed

    def test_reject_fails_as_nova_expects(self):
        self.install({('scheduler', 'filter_hosts_by_image_type_support'):
                        True,
                      ('image_type_filter', 'unknown_format'): 'reject'})
        spec = nova_spec({'disk_format': 'qed'})
        error = self.assertRaises(nova_exception.RequestFilterFailed,
                                  self.run_ours, spec)
        self.assertIn("'qed' is not a known image type", str(error))

    def test_installed_once_after_novas_own_filters(self):
        self.install()
        self.install()  # nova-scheduler may build its HostManager again
        ours = integration.installed_filters()
        self.assertEqual(1, len(ours))
        names = [f.__name__ for f in nova_request_filter.ALL_REQUEST_FILTERS]
        self.assertEqual(integration.ENTRY, names[-1])
        self.assertEqual(1, names.count(integration.ENTRY))
        self.assertLess(names.index('require_image_type_support'),
                        names.index(integration.ENTRY))
        helpers.uninstall_filters(integration)
        self.assertEqual([], integration.installed_filters())

    def test_a_rule_on_a_property_nova_drops_stops_start_up(self):
        self.flags(rules=['trove=true:CUSTOM_TROVE'], group='image_isolation')
        error = self.assertRaises(exceptions.ConfigError,
                                  image_type_filter.nova.all_filters)
        message = str(error)
        self.assertNotIn('\n', message)
        self.assertIn('trait:CUSTOM_TROVE=required', message)
        self.assertEqual([], integration.installed_filters())


def test_every_field_the_filters_read_is_one_novas_objects_have():
    """A field Nova renamed would make the filters filter nothing by it
    (said at start-up): the object fields compat.NEEDS names are Nova's
    own objects' fields."""
    objects.register_all()
    read = [name.split(':')[1].split('.') for name, part in
            compat.NEEDS.items() if part == compat.REQUEST_FILTERS
            and name.startswith('nova.objects.') and name.count('.') == 3]
    assert {name for name, _ in read} == {
        'RequestSpec', 'ImageMeta', 'ImageMetaProps', 'Flavor'}
    # root_required and root_forbidden are RequestSpec properties; the
    # rest are fields.
    assert [(name, field) for name, field in read
            if field not in getattr(objects, name).fields] == [
        ('RequestSpec', 'root_required'), ('RequestSpec', 'root_forbidden')]
    assert isinstance(objects.RequestSpec.root_required, property)
    assert isinstance(objects.RequestSpec.root_forbidden, property)
    # And every image property the prefilter reads, but the legacy one
    # nova-api renames before Nova's objects ever hold it.
    props = objects.ImageMetaProps.fields
    assert sorted(
        prop for family in image_metadata.FAMILIES.values()
        for prop in family.properties
        if prop not in image_metadata.LEGACY_PROPERTIES
        and prop not in props) == []


class TestNoFieldIsMissed(NovaTestCase):
    def test_every_filter_on_a_full_nova_request_logs_no_error(self):
        """Loaded into this Nova, no field the filters read is missing (an
        ERROR at start-up, ``nova.compat``), and a full request reads
        every one without an ERROR."""
        spec = nova_spec({'id': 'a440c04b-79fa-479c-bed1-0b816eaec379',
                          'disk_format': 'raw', 'properties': {
                              'os_distro': 'rhel', 'hw_disk_bus': 'scsi',
                              'hw_architecture': 'x86_64',
                              'trait:CUSTOM_TROVE': 'required'}},
                         extra_specs={'trait:CUSTOM_GPU': 'required'},
                         instance_uuid='c0a1c6ee-3b8c-4b7e-9a43-2d9d0f9d1a11')
        with self.assertNoLogs('image_type_filter', 'ERROR'):
            self.install({('scheduler', 'filter_hosts_by_image_type_support'):
                          True, ('image_isolation', 'enabled'): True,
                          ('image_isolation', 'rules'): RULES,
                          ('image_metadata_prefilter', 'families'):
                          list(image_metadata.NAMES)})
            self.run_ours(spec)
        self.assertEqual({'COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_RHEL',
                          'CUSTOM_TROVE', 'CUSTOM_GPU',
                          'COMPUTE_STORAGE_BUS_SCSI'}, spec.root_required)


def _loaded(code):
    probe = code + '\nprint("\\n".join(sorted(sys.modules)))'
    proc = subprocess.run([sys.executable, '-c', 'import sys\n' + probe],
                          capture_output=True, text=True, timeout=180,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


def test_nova_integration_is_lean():
    """In a fresh interpreter, as nova-scheduler imports it: beyond what
    Nova's own modules load (Nova itself brings cliff, through
    neutronclient), it adds no CLI library and none of this project's
    diagnostics, CLI, reporter, runner or demo."""
    nova_alone = _loaded(
        'import nova.conf, nova.exception, nova.objects.image_meta\n'
        'import nova.scheduler.client.report, nova.scheduler.filters\n'
        'import nova.scheduler.request_filter, nova.scheduler.utils')
    added = _loaded('import image_type_filter.nova') - nova_alone
    ours = sorted(m for m in added if m.startswith((
        'virt_capabilities', 'placement_runner', 'image_type_demo',
        'image_type_filter.diagnostics', 'image_type_filter.cmd')))
    assert ours == []
    assert sorted(m for m in added if m.split('.')[0] in (
        'cliff', 'cmd2', 'prettytable', 'osc_lib', 'oslo_upgradecheck',
        'openstack', 'yaml', 'autopage')) == []
    assert 'image_type_filter.scheduler.pipeline' in added


def test_every_seam_is_in_this_nova():
    """Each Nova internal compat.SEAMS names, for every part (the
    scheduler's and the candidates command's), is in this Nova release:
    the suite runs on both ends of the supported range."""
    assert compat.resolve(tuple(compat.WHEN_CHANGED)).missing == {}
