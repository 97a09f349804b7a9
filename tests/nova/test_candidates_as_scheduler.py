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

"""candidates --server against the query nova-scheduler really sent.

Servers are booted through Nova's own functional harness (real nova-api,
conductor, scheduler with this project's filters, fake computes, a real
Placement); every ``GET /allocation_candidates`` the scheduler sends is
recorded on its way to Placement. Then the library under ``candidates
--server`` reads each server back through the real compute API (admin
credentials, the microversion the tool asks for) and its request spec from
Nova's database, runs Nova's request filters and query code on it and asks
Placement: the query must be the one the scheduler sent, character for
character; an ACTIVE server's host must be offered (or fit once its own
allocation is given back); a server in ERROR must have its cause named,
host by host. Among the boots: a flavor with extra specs, an image with a
vTPM, a format no host boots, and a disabled compute service.
"""

import contextlib
import datetime
import io
import json
import os

import pytest

pytest.importorskip('nova')

import fixtures  # noqa: E402
from keystoneauth1 import adapter as ks_adapter  # noqa: E402
from keystoneauth1 import noauth  # noqa: E402
from keystoneauth1 import session as ks_session  # noqa: E402
from keystoneauth1 import token_endpoint  # noqa: E402
from nova import conf as nova_conf  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova.scheduler import request_filter  # noqa: E402
from openstack import connection as sdk_connection  # noqa: E402

from image_type_common import connection  # noqa: E402
from image_type_common import exceptions  # noqa: E402
from image_type_common.cli import app as cli_app  # noqa: E402
from image_type_filter.cmd import candidates  # noqa: E402
from image_type_filter.diagnostics import verdicts  # noqa: E402
from image_type_filter.diagnostics.nova_side import as_scheduler  # noqa: E402
from image_type_filter.diagnostics.nova_side import cloud  # noqa: E402
from tests.nova import base  # noqa: E402

CONF = nova_conf.CONF
CANDIDATES = '/allocation_candidates?'


class HarnessCloud(cloud.Cloud):
    """The real compute API through openstacksdk, and Glance's v2 answers
    for the harness's images (Nova's GlanceFixture has no HTTP side): the
    image's properties at the top level beside Glance's base attributes,
    as Glance's API shows them, with Glance's image schema."""

    BASE = frozenset(('id', 'name', 'status', 'visibility', 'protected',
                      'checksum', 'owner', 'size', 'min_ram', 'min_disk',
                      'disk_format', 'container_format', 'created_at',
                      'updated_at'))
    #: The schema's base attributes, and an image property it lists with
    #: ``is_base: false`` (as Glance's lists os_distro and others).
    SCHEMA = {'name': 'image', 'properties': dict(
        {name: {} for name in BASE}, os_secure_boot={'is_base': False})}

    def __init__(self, conn, glance):
        super().__init__(conn)
        self.glance = glance

    def image(self, image_id):
        found = self.glance.images.get(str(image_id))
        if found is None:
            raise cloud.NotFound('no image %s in Glance' % image_id)
        shown = cloud.GlanceImage({  # timestamps as Glance's API writes them
            k: v.isoformat() if isinstance(v, datetime.datetime) else v
            for k, v in found.items() if k in self.BASE})
        shown.update(found.get('properties') or {})
        shown.schema = self.SCHEMA
        return shown


class Harness(base.InsideNova):
    scheduler_options = {
        ('scheduler', 'filter_hosts_by_image_type_support'): True,
        ('scheduler', 'query_placement_for_image_type_support'): True,
    }

    def setUp(self):
        super().setUp()
        self.sent = []
        placement_adapter = self.placement.fixture._client
        real_get = placement_adapter.get

        def recording_get(url, *args, **kwargs):
            if url.startswith(CANDIDATES):
                self.sent.append(url)
            return real_get(url, *args, **kwargs)
        placement_adapter.get = recording_get
        self.placement_client = self.new_placement_client()
        self.compute_api = self.compute_as('reader,member,admin')
        self.images = self.compute_api
        self.ctxt = nova_context.get_admin_context()
        self._start_compute('host2')

    def compute_as(self, roles):
        """The real compute API, as a user with these roles."""
        return HarnessCloud(sdk_connection.Connection(
            session=ks_session.Session(
                auth=noauth.NoAuth(), additional_headers={
                    'X-Auth-User': 'someone', 'X-User-Id': 'someone',
                    'X-Auth-Project-Id': self.api.project_id,
                    'X-Roles': roles}),
            compute_endpoint_override=self.api.base_url), self.glance)

    def new_placement_client(self):
        endpoint = self.placement.fixture.endpoint
        return connection.client(ks_adapter.Adapter(
            ks_session.Session(auth=token_endpoint.Token(endpoint, 'admin')),
            service_type='placement', endpoint_override=endpoint))

    def explain(self, spec, server=None, compute=None, placement=None):
        return as_scheduler.explain(
            self.ctxt, spec, compute or self.compute_api,
            placement or self.placement_client, 'the harness\'s nova.conf',
            server)

    def boot_and_explain(self, image, flavor_id=None, expected='ACTIVE'):
        self.sent.clear()
        booted = self.boot(image, flavor_id=flavor_id, expected=expected)
        server, spec = as_scheduler.for_server(
            self.ctxt, self.compute_api, booted['id'])
        return server, self.explain(spec, server)

    def assert_same_query(self, document):
        """The queries of the last boot, in the order sent."""
        self.assertTrue(self.sent, 'nova-scheduler sent no query')
        self.assertEqual(self.sent, document['queries'])

    def hosts(self, document):
        return {h['name']: h for h in document['hosts']}


class TestCandidatesAsTheScheduler(Harness):

    def test_an_active_server_is_offered_its_host(self):
        server, document = self.boot_and_explain(base.RAW_IMAGE)
        self.assert_same_query(document)
        self.assertIn('OWNER_NOVA' if document['nova']['release'] >= 34
                      else 'COMPUTE_STATUS_DISABLED', document['query'])
        host = self.hosts(document)[server.hypervisor_hostname]
        self.assertIn(host['result'], (verdicts.CANDIDATE,
                                       verdicts.FITS_WITH_OWN))
        self.assertIsNone(document['no_valid_host'])

    def test_a_disabled_compute_service_is_named(self):
        service = self.admin_api.get_services(host='host2',
                                              binary='nova-compute')[0]
        self.admin_api.put_service(service['id'], {
            'status': 'disabled', 'disabled_reason': 'maintenance'})
        uuid = self._get_provider_uuid_by_host('host2')
        self.assertIn('COMPUTE_STATUS_DISABLED',
                      self._get_provider_traits(uuid))
        server, document = self.boot_and_explain(base.RAW_IMAGE)
        self.assert_same_query(document)
        self.assertEqual('compute', server.compute_host)
        (reason,) = self.hosts(document)['host2']['reasons']
        self.assertEqual('root_required !COMPUTE_STATUS_DISABLED: carries '
                         'it (its compute service is disabled: '
                         'maintenance)', reason)
        ran = {f['name']: f['result'] for f in document['request_filters']}
        self.assertEqual(as_scheduler.APPLIED, ran['compute_status_filter'])

    def test_a_flavor_with_extra_specs_no_host_has(self):
        flavor = self._create_flavor(
            memory_mb=512, vcpu=2, disk=1, extra_spec={
                'hw:cpu_policy': 'dedicated',
                'trait:HW_CPU_X86_AVX2': 'required'})
        server, document = self.boot_and_explain(
            base.RAW_IMAGE, flavor_id=flavor, expected='ERROR')
        # Two queries: PCPU, then nova-scheduler's VCPU fallback.
        self.assert_same_query(document)
        self.assertEqual(2, len(document['queries']))
        self.assertIn('PCPU%3A2', document['queries'][0])
        self.assertIn('VCPU%3A2', document['queries'][1])
        self.assertIn('No valid host', server.fault['message'])
        for host in document['hosts']:
            reasons = ' | '.join(host['reasons'])
            self.assertIn('query 1 (PCPU): resources PCPU:2', reasons)
            self.assertIn('query 2 (VCPU fallback): required '
                          'HW_CPU_X86_AVX2', reasons)
        self.assertIn('PCPU', document['no_valid_host'])

    def test_an_image_nova_turns_into_traits(self):
        image = self.image('raw', hw_tpm_version='2.0',
                           hw_tpm_model='tpm-crb')
        server, document = self.boot_and_explain(image, expected='ERROR')
        self.assert_same_query(document)
        for host in document['hosts']:
            self.assertIn('COMPUTE_SECURITY_TPM_CRB',
                          ' '.join(host['reasons']))
        self.assertIn('COMPUTE_SECURITY_TPM_2_0', document['query'])

    def test_a_format_no_host_boots_is_refused_before_placement(self):
        server, document = self.boot_and_explain(base.VHD_IMAGE,
                                                 expected='ERROR')
        self.assertEqual([], self.sent)  # the filter refused first
        self.assertIsNone(document['query'])
        self.assertIn('vhd', document['no_valid_host'])
        failed = [f['name'] for f in document['request_filters']
                  if f['result'] == as_scheduler.FAILS]
        self.assertEqual(['image_type_filter.request_filters'], failed)
        self.assertEqual([], document['hosts'])

    def test_an_image_and_a_flavor_ask_what_their_boot_asked(self):
        flavor = self._create_flavor(name='gold', memory_mb=512, vcpu=1,
                                     disk=1, extra_spec={
                                         'hw:tpm_version': '1.2'})
        image = self.image('raw', os_secure_boot='required')
        self.sent.clear()
        self.boot(image, flavor_id=flavor, expected='ERROR')
        spec = as_scheduler.for_image_and_flavor(
            self.ctxt, self.images, image=image, flavor='gold',
            project_id=self.api.project_id)
        # Split by Glance's schema as Nova splits it.
        self.assertEqual(image, spec.image.id)
        self.assertEqual('raw', spec.image.disk_format)
        self.assertEqual('required', spec.image.properties.os_secure_boot)
        document = self.explain(spec)
        self.assert_same_query(document)
        self.assertEqual('image and flavor', document['subject']['kind'])
        self.assertIn('COMPUTE_SECURITY_TPM_1_2', document['query'])
        self.assertIn('COMPUTE_SECURITY_UEFI_SECURE_BOOT', document['query'])

    def test_what_nova_api_refuses_asks_placement_nothing(self):
        self._create_flavor(name='shared', memory_mb=512, vcpu=1, disk=1,
                            extra_spec={'hw:cpu_policy': 'shared'})
        image = self.image('raw', hw_cpu_policy='dedicated')
        with self.assertRaises(exceptions.ConfigError) as caught:
            as_scheduler.for_image_and_flavor(
                self.ctxt, self.images, image=image, flavor='shared')
        self.assertEqual(2, caught.exception.exit_code)
        self.assertIn('nova-api refuses this boot', str(caught.exception))
        self.assertIn('hw_cpu_policy', str(caught.exception))

    def test_without_the_admin_role_nova_refuses_in_one_line(self):
        server = self.boot(base.RAW_IMAGE)
        member = self.compute_as('reader,member')
        server, spec = as_scheduler.for_server(self.ctxt, member,
                                               server['id'])
        with self.assertRaises(Exception) as caught:
            self.explain(spec, server, compute=member)
        message = str(caught.exception)
        self.assertEqual(2, caught.exception.exit_code)
        self.assertIn('Nova refused the credentials (403)', message)
        self.assertIn('admin role', message)
        self.assertNotIn('\n', message)

    def test_a_server_or_flavor_that_does_not_exist_is_one_line(self):
        for lookup in (
                lambda: as_scheduler.for_server(
                    self.ctxt, self.compute_api, 'no-such-server'),
                lambda: as_scheduler.for_image_and_flavor(
                    self.ctxt, self.images, flavor='no-such-flavor')):
            with self.assertRaises(cloud.NotFound) as caught:
                lookup()
            self.assertEqual(2, caught.exception.exit_code)
            self.assertNotIn('\n', str(caught.exception))
            self.assertIn('no-such-', str(caught.exception))


NOVA_CONF = """[placement]
auth_type = admin_token
endpoint = %s
token = admin

[scheduler]
filter_hosts_by_image_type_support = True
query_placement_for_image_type_support = True

[filter_scheduler]
available_filters = nova.scheduler.filters.all_filters
available_filters = image_type_filter.nova.all_filters
"""


class TestTheCommand(Harness):
    """``image-type-filter candidates --server`` itself, in this process
    (the harness's APIs answer only here): nova.conf written as the
    scheduler's, Nova and Glance through the harness's own endpoints in
    place of openstacksdk's catalogue, and Nova as the harness configured
    it (``load_nova``'s own run is in test_load_nova)."""

    def run_command(self, *args):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'nova.conf')
        with open(path, 'w') as f:
            f.write(NOVA_CONF % self.placement.fixture.endpoint)
        self.useFixture(fixtures.MonkeyPatch(
            'image_type_filter.cmd.candidates.Candidates.cloud_apis',
            lambda command, parsed_args: self.compute_api))
        # Nova is configured already, by the harness: its databases are
        # the harness's own, which no nova.conf can name.
        self.useFixture(fixtures.MonkeyPatch(
            'image_type_filter.diagnostics.nova_side.as_scheduler.load_nova',
            lambda config_files, config_dirs: self.ctxt))
        out, err = io.StringIO(), io.StringIO()
        app = cli_app.App('image-type-filter', 'test',
                          'image_type_filter.commands')
        app.stdout, app.stderr = out, err
        # The command logs to its own stderr; Nova's warnings (printed
        # while the harness answers) go elsewhere.
        with contextlib.redirect_stderr(io.StringIO()):
            code = app.run(['candidates', '--config-file', path, *args])
        return code, out.getvalue(), err.getvalue()

    def test_json_gives_the_query_and_a_verdict_per_host(self):
        self.sent.clear()
        server = self.boot(base.RAW_IMAGE)
        sent = list(self.sent)
        code, out, err = self.run_command('--server', server['id'],
                                          '-f', 'json')
        self.assertEqual(0, code, err)
        document = json.loads(out)
        self.assertEqual(sent, document['queries'])
        self.assertEqual(sent[0], document['query'])
        # Provider names are the fake driver's node names.
        self.assertEqual({'fake-mini', 'host2'},
                         {h['name'] for h in document['hosts']})
        self.assertEqual(len(candidates.DOCUMENT), len(document))
        self.assertTrue(document['nova']['image_type_filter_loaded'])
        names = [f['name'] for f in document['request_filters']]
        self.assertEqual([f.__name__ for f in
                          request_filter.ALL_REQUEST_FILTERS], names)
        self.assertEqual('image_type_filter.request_filters', names[-1])

    def test_no_valid_host_is_exit_3_with_the_reason(self):
        image = self.image('raw', os_secure_boot='required')
        server = self.boot(image, expected='ERROR')
        code, out, err = self.run_command('--server', server['id'])
        self.assertEqual(candidates.NO_VALID_HOST, code)
        self.assertIn('No valid host', err)
        self.assertIn('COMPUTE_SECURITY_UEFI_SECURE_BOOT', err)
        self.assertIn('GET /allocation_candidates?limit=1000&', out)
        self.assertIn('required COMPUTE_SECURITY_UEFI_SECURE_BOOT: lacks it',
                      out)
        self.assertIn('host filters', out)

    def test_an_image_with_resources_asks_what_that_flavor_asked(self):
        flavor = self._create_flavor(memory_mb=512, vcpu=1, disk=1,
                                     ephemeral=0)
        self.sent.clear()
        self.boot(base.RAW_IMAGE, flavor_id=flavor)
        sent = list(self.sent)
        code, out, err = self.run_command(
            '--image', base.RAW_IMAGE, '--resources',
            'VCPU=1,MEMORY_MB=512,DISK_GB=1', '-f', 'json')
        self.assertEqual(0, code, err)
        document = json.loads(out)
        self.assertEqual(sent, document['queries'])
        self.assertEqual('image and flavor', document['subject']['kind'])
        self.assertIn('no --flavor', ' '.join(document['subject']['notes']))

    def test_a_missing_server_is_one_line_and_exit_2(self):
        code, out, err = self.run_command('--server', 'no-such-server')
        self.assertEqual(2, code)
        self.assertEqual(1, len(err.strip().splitlines()), err)
        self.assertIn('no server', err)


class TestLogOnly(Harness):
    """[image_type_filter] enforce = False: this project's filters change
    no query in nova-scheduler, and none in candidates' either."""

    scheduler_options = {
        ('scheduler', 'filter_hosts_by_image_type_support'): True,
        ('image_isolation', 'enabled'): True,
        ('image_isolation', 'rules'): ['CUSTOM_TROVE'],
        ('image_type_filter', 'enforce'): False,
    }

    def test_the_query_is_novas_alone_and_the_rest_is_said(self):
        server, document = self.boot_and_explain(base.RAW_IMAGE)
        self.assert_same_query(document)
        self.assertNotIn('COMPUTE_IMAGE_TYPE_RAW', document['query'])
        self.assertNotIn('CUSTOM_TROVE', document['query'])
        (ours,) = [f for f in document['request_filters']
                   if f['name'] == 'image_type_filter.request_filters']
        self.assertEqual(as_scheduler.NOT_APPLIED, ours['result'])
        self.assertIn('COMPUTE_IMAGE_TYPE_RAW', ours['detail'])
        self.assertIn('CUSTOM_TROVE', ours['detail'])
