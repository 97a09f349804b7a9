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

"""Nova's own functional harness, with this project loaded the documented way.

Real nova-api, conductor, scheduler and fake computes in one process, Nova's
Glance fixture and a real Placement (Placement's own fixture). The
scheduler is configured only through nova.conf options, exactly as the
install guide's scheduler page (doc/source/install/scheduler.rst) says;
nothing of Nova is patched.
"""

import os
import sys

import fixtures
from nova import conf as nova_conf
from nova.tests.functional import integrated_helpers

from image_type_filter import conf as itf_conf
from image_type_filter.nova import integration
from tests import helpers
from virt_capabilities import service

CONF = nova_conf.CONF
API_PASTE = os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')
OUR_FILTERS = 'image_type_filter.nova.all_filters'
REBUILD_FILTER = 'ImageTypeRebuildFilter'
RAW_IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'   # Nova's fixture images
VHD_IMAGE = 'a440c04b-79fa-479c-bed1-0b816eaec379'
#: Placement's policy for GET /resource_providers/{uuid}/traits.
PROVIDER_TRAITS_RULE = 'placement:resource_providers:traits:list'


class InsideNova(integrated_helpers._IntegratedTestBase):
    """Boot servers through Nova with this project's filters loaded."""

    ADMIN_API = True
    microversion = 'latest'
    compute_driver = 'fake.MediumFakeDriver'
    #: Options set before nova-scheduler starts, as nova.conf would.
    scheduler_options = {}
    enable_rebuild_filter = True

    def _clear_attrs(self):
        # Nova's clean-up deletes the test's attributes, and pytest then
        # fails deleting them again; stestr and testtools.run need nothing.
        pass

    def setUp(self):
        self.addCleanup(helpers.uninstall_filters, integration)
        super().setUp()

    def _setup_scheduler_service(self):
        self.flags(compute_driver=self.compute_driver)
        self.flags(api_paste_config=API_PASTE, group='wsgi')
        self.flags(available_filters=['nova.scheduler.filters.all_filters',
                                      OUR_FILTERS],
                   group='filter_scheduler')
        if self.enable_rebuild_filter:
            self.flags(enabled_filters=list(
                CONF.filter_scheduler.enabled_filters) + [REBUILD_FILTER],
                group='filter_scheduler')
        # What a nova.conf sets: our options exist once Nova loads the
        # module; registering them first lets the test set them like files.
        itf_conf.register_nova_opts(CONF)
        for (group, name), value in self.scheduler_options.items():
            self.flags(**{name: value, 'group': group})
        return super()._setup_scheduler_service()

    # -- helpers ---------------------------------------------------------

    def boot(self, image, flavor_id=None, expected='ACTIVE'):
        server = self._build_server(image_uuid=image, flavor_id=flavor_id,
                                    networks='none')
        server = self.api.post_server({'server': server})
        return self._wait_for_state_change(server, expected)

    def image(self, disk_format='raw', **properties):
        return self._create_image_with(disk_format, properties)['id']

    def _create_image_with(self, disk_format, properties):
        from oslo_utils import uuidutils
        return self.glance.create(None, {
            'id': uuidutils.generate_uuid(), 'name': 'img', 'status': 'active',
            'container_format': 'bare', 'disk_format': disk_format,
            'min_ram': 0, 'min_disk': 0, 'size': 1024,
            'visibility': 'public', 'properties': dict(properties)})

    def host_of(self, server):
        return server['OS-EXT-SRV-ATTR:host']

    def placement_refuses(self, rule):
        """From now on Placement answers 403 to what its policy ``rule``
        covers, whoever asks (Placement's own policy fixture: the role
        nova-scheduler's user lacks); the fixture's clean-up restores the
        defaults."""
        from placement.tests.unit import policy_fixture
        policy_fixture.PolicyFixture.set_rules({rule: '!'}, overwrite=False)

    def run_reporter(self, host, extra='', **kwargs):
        """Our reporter, once, on a node's own nova.conf, into Nova's
        Placement; it finds the provider nova-compute created by ``host``."""
        return run_reporter(self, host, extra, **kwargs)


def run_reporter(test, host, extra='', driver='fake.FakeDriver',
                 providers=(), workdir=None):
    """The reporter, once, for ``test`` (any of Nova's integrated test
    cases): a nova.conf of ``driver`` with ``extra`` appended to [DEFAULT],
    its state in ``workdir`` (a fresh one unless given), the providers by
    name or uuid (default: the driver's own rule)."""
    workdir = workdir or test.useFixture(fixtures.TempDir()).path
    path = os.path.join(workdir, 'nova.conf')
    with open(path, 'w') as f:
        f.write('[DEFAULT]\ncompute_driver = %s\n'
                'host = %s\nstate_path = %s\n%s\n'
                '[placement]\nauth_type = admin_token\nendpoint = %s\n'
                'token = admin\n' % (driver, host, workdir, extra,
                                     test.placement.fixture.endpoint))
    return service.run_once(
        lambda: service.ReportJob([path], list(providers)), 0)
