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

"""``[image_type_filter] enforce = False`` inside Nova's own harness: no
request changes, each is logged once with its server, and Nova's own
options keep doing what Nova documents.

What nova-scheduler asks Placement is read where Nova builds it: a spy
around Nova's own ``get_allocation_candidates`` keeps each
``ResourceRequest``'s query string and calls the real method.
"""

import urllib.parse

import pytest

pytest.importorskip('nova')

import fixtures  # noqa: E402
from nova.scheduler.client import report  # noqa: E402

from image_type_filter.scheduler import log_only  # noqa: E402
from tests.nova import base  # noqa: E402

OURS = ('scheduler', 'filter_hosts_by_image_type_support')
NOVAS = ('scheduler', 'query_placement_for_image_type_support')
RESERVED = 'CUSTOM_TROVE'
TAG = {'trait:%s' % RESERVED: 'required'}
ISOLATION = {('image_isolation', 'enabled'): True,
             ('image_isolation', 'rules'): [RESERVED]}
LOG_ONLY = {('image_type_filter', 'enforce'): False}


class SpiedQueries(base.InsideNova):
    """Boots whose allocation-candidate queries are kept."""

    def setUp(self):
        self.queries = []
        real = report.SchedulerReportClient.get_allocation_candidates
        test = self

        def spy(client, context, resources):
            test.queries.append(urllib.parse.unquote(
                resources.to_querystring()))
            return real(client, context, resources)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.client.report.SchedulerReportClient.'
            'get_allocation_candidates', spy))
        super().setUp()

    def query_of(self, boot):
        """The one query the boot (a callable) made."""
        before = len(self.queries)
        server = boot()
        [query] = self.queries[before:]
        return server, query

    def log_only_lines(self):
        """server id -> its log-only lines (the message after Nova's log
        prefix)."""
        found = {}
        for line in self.stdlog.logger.output.splitlines():
            start = line.find(log_only.PREFIX)
            if start < 0:
                continue
            match = log_only.PATTERN.fullmatch(line[start:])
            self.assertIsNotNone(match, line)
            found.setdefault(match['server'], []).append(line[start:])
        return found


class TestEnforced(SpiedQueries):
    """The control: the same boots, enforced, change the query."""

    scheduler_options = {OURS: True, **ISOLATION}

    def test_the_query_carries_our_traits(self):
        _, query = self.query_of(lambda: self.boot(base.RAW_IMAGE))
        self.assertIn('COMPUTE_IMAGE_TYPE_RAW', query)
        self.assertIn('!%s' % RESERVED, query)
        self.assertEqual({}, self.log_only_lines())


class TestLogOnly(SpiedQueries):
    scheduler_options = {OURS: True, **ISOLATION, **LOG_ONLY,
                         ('image_type_filter', 'unknown_format'): 'reject'}

    def setUp(self):
        super().setUp()
        self._start_compute('trove-host')
        self.assertEqual(0, self.run_reporter(
            'trove-host',
            '[virt_capabilities]\ncustom_traits = %s\n' % RESERVED))

    def test_no_request_changes_and_each_is_logged_once(self):
        boots = {
            'raw': lambda: self.boot(base.RAW_IMAGE),
            # Nova's fake computes report RAW only: enforced, this is
            # "No valid host"; here it boots.
            'vhd': lambda: self.boot(base.VHD_IMAGE),
            'qed': lambda: self.boot(self.image('qed')),
            'tagged': lambda: self.boot(self.image('raw', **TAG)),
        }
        servers = {}
        for name, boot in boots.items():
            server, query = self.query_of(boot)
            self.assertEqual('ACTIVE', server['status'])
            # Nova itself asks for what the image tags (required=X); the
            # filters' root_required and root_forbidden are left out.
            params = urllib.parse.parse_qs(query)
            self.assertNotIn('COMPUTE_IMAGE_TYPE', query)
            self.assertNotIn(RESERVED, params['root_required'][0])
            self.assertEqual(
                [RESERVED] if name == 'tagged' else None,
                params.get('required'))
            servers[name] = server['id']
        lines = self.log_only_lines()
        self.assertEqual(sorted(servers.values()), sorted(lines))
        prefix = '%s: server %%s: ' % log_only.PREFIX
        self.assertEqual([prefix % servers['raw'] + (
            'would add: root_required=COMPUTE_IMAGE_TYPE_RAW '
            'root_forbidden=%s' % RESERVED)], lines[servers['raw']])
        self.assertEqual([prefix % servers['vhd'] + (
            'would refuse: No compute host boots vhd images '
            '(COMPUTE_IMAGE_TYPE_VHD); this cloud boots raw.')],
            lines[servers['vhd']])
        [qed] = lines[servers['qed']]
        self.assertTrue(qed.startswith(
            prefix % servers['qed'] + "would refuse: image disk_format "
            "'qed' is not a known image type"), qed)
        self.assertEqual([prefix % servers['tagged'] + (
            'would add: root_required=COMPUTE_IMAGE_TYPE_RAW,%s'
            % RESERVED)], lines[servers['tagged']])

    def test_a_rebuild_the_filter_would_refuse_goes_through_and_is_logged(
            self):
        server = self.boot(base.RAW_IMAGE)
        # Unfiltered, it may land on either host: its allocation says which.
        [host] = self._get_allocations_by_server_uuid(server['id'])
        server = self._rebuild_server(server, base.VHD_IMAGE)
        self.assertEqual(base.VHD_IMAGE, server['image']['id'])
        self.assertIn(
            '%s: server %s: would refuse: rebuild to image %s on host %s: '
            'No compute host boots vhd images (COMPUTE_IMAGE_TYPE_VHD); '
            'this cloud boots raw.' % (
                log_only.PREFIX, server['id'], base.VHD_IMAGE, host),
            self.log_only_lines()[server['id']])


class TestNovasOwnOptionsUnderLogOnly(SpiedQueries):
    """Nova's own image-type and image-metadata prefilters and its
    isolated aggregates work as Nova documents them, whatever
    ``enforce`` says."""

    scheduler_options = {NOVAS: True,
                         ('scheduler', 'image_metadata_prefilter'): True,
                         ('scheduler',
                          'enable_isolated_aggregate_filtering'): True,
                         **LOG_ONLY}

    def test_novas_image_type_filter_still_refuses_with_novas_fault(self):
        failed, query = self.query_of(
            lambda: self.boot(base.VHD_IMAGE, expected='ERROR'))
        self.assertIn('COMPUTE_IMAGE_TYPE_VHD', query)  # Nova's own filter
        # Nova's own "no allocation candidates" fault: an empty reason.
        self.assertEqual('No valid host was found. ',
                         failed['fault']['message'])
        [line] = self.log_only_lines()[failed['id']]
        self.assertIn('would refuse: No compute host boots vhd images',
                      line)

    def test_novas_image_metadata_prefilter_still_adds_its_trait(self):
        _, query = self.query_of(lambda: self.boot(
            self.image('raw', hw_disk_bus='scsi'), expected='ERROR'))
        self.assertIn('COMPUTE_STORAGE_BUS_SCSI', query)

    def test_novas_isolated_aggregates_are_still_forbidden(self):
        aggregate = self._create_aggregate('isolated')
        self.admin_api.post_aggregate_action(aggregate, {'set_metadata': {
            'metadata': {'trait:CUSTOM_ISOLATED': 'required'}}})
        uuid = self.admin_api.api_get(
            '/os-aggregates/%s' % aggregate).body['aggregate']['uuid']
        # An image without properties: Nova's own image-metadata prefilter
        # would add HW_ARCH_X86_64 for the fixture image's architecture.
        _, query = self.query_of(lambda: self.boot(self.image('raw')))
        self.assertIn('member_of=!in:%s' % uuid, query)
