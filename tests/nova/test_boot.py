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

"""Servers booted through Nova's API: the filters run on every boot."""

import pytest

pytest.importorskip('nova')

from tests.nova import base  # noqa: E402

OURS = ('scheduler', 'filter_hosts_by_image_type_support')
NOVAS = ('scheduler', 'query_placement_for_image_type_support')


class TestImageTypeFilterInNova(base.InsideNova):
    scheduler_options = {OURS: True}

    def test_vhd_finds_no_host_and_raw_boots(self):
        # Nova's fake computes report COMPUTE_IMAGE_TYPE_RAW and no VHD.
        failed = self.boot(base.VHD_IMAGE, expected='ERROR')
        self.assertIn('No valid host', failed['fault']['message'])
        self.boot(base.RAW_IMAGE)

    def test_volume_backed_boots_are_not_filtered(self):
        server = self._create_server_boot_from_volume(
            image_args={'disk_format': 'vhd'}, networks='none')
        self.assertEqual('ACTIVE', server['status'])

    def test_rebuild_to_an_image_the_host_cannot_boot_is_refused(self):
        """The server's fault names the reason, as a refused boot's does,
        not only Nova's "There are not enough hosts available"."""
        server = self.boot(base.RAW_IMAGE)
        # Under Nova's CastAsCall fixture the scheduler's NoValidHost comes
        # back to the API as a 500; a real API answers 202 (as Nova's own
        # test_rebuild_with_image_novalidhost explains).
        self.api.api_post('/servers/%s/action' % server['id'],
                          {'rebuild': {'imageRef': base.VHD_IMAGE}},
                          check_response_status=[500])
        self._wait_for_action_fail_completion(
            server, 'rebuild', 'rebuild_server')
        server = self.api.get_server(server['id'])
        self.assertEqual(base.RAW_IMAGE, server['image']['id'])  # rolled back
        self.assertEqual('ERROR', server['status'])
        self.assertEqual(
            'No valid host was found. The server\'s host cannot take the '
            'new image. No compute host boots vhd images '
            '(COMPUTE_IMAGE_TYPE_VHD); this cloud boots raw.',
            server['fault']['message'])

    def test_rebuild_to_an_image_the_host_boots_goes_through(self):
        server = self.boot(base.RAW_IMAGE)
        raw_too = self.image('raw')
        server = self._rebuild_server(server, raw_too)
        self.assertEqual(raw_too, server['image']['id'])

    def test_rebuild_when_placement_refuses_the_read_goes_through(self):
        """No isolation enforced: a host whose traits cannot be read is
        let through, as Nova alone would, with one line naming Placement
        and the server."""
        server = self.boot(base.RAW_IMAGE)
        raw_too = self.image('raw')
        self.placement_refuses(base.PROVIDER_TRAITS_RULE)
        server = self._rebuild_server(server, raw_too)
        self.assertEqual(raw_too, server['image']['id'])
        [line] = [line for line in self.stdlog.logger.output.splitlines()
                  if 'rebuild of server' in line]
        self.assertIn('WARNING', line)
        self.assertIn('rebuild of server %s to image %s not checked on host '
                      % (server['id'], raw_too), line)
        self.assertIn(': its traits could not be read from Placement '
                      '(Placement refused GET /resource_providers/', line)
        self.assertIn('/traits (403, policy %s)' % base.PROVIDER_TRAITS_RULE,
                      line)


class TestNovaUnaided(base.InsideNova):
    """The same requests with the filters off: what they protect from."""

    enable_rebuild_filter = False

    def test_vhd_boots_on_a_host_that_cannot_boot_it(self):
        self.boot(base.VHD_IMAGE)

    def test_nova_rebuilds_to_an_unbootable_image_unchecked(self):
        server = self.boot(base.RAW_IMAGE)
        server = self._rebuild_server(server, base.VHD_IMAGE)
        self.assertEqual(base.VHD_IMAGE, server['image']['id'])


class TestBothOptionsOn(base.InsideNova):
    """Nova's own option on too: Nova's option, read, not re-declared."""

    scheduler_options = {OURS: True, NOVAS: True}

    def test_same_answers_and_no_deprecation(self):
        failed = self.boot(base.VHD_IMAGE, expected='ERROR')
        self.assertIn('No valid host', failed['fault']['message'])
        self.boot(base.RAW_IMAGE)
        for line in self.stdlog.logger.output.splitlines():
            self.assertFalse('query_placement_for_image_type_support' in line
                             and 'deprecated' in line.lower(), line)


class TestNovasOptionAlone(base.InsideNova):
    scheduler_options = {NOVAS: True,
                         ('image_type_filter', 'unknown_format'): 'reject'}

    def test_our_filter_follows_novas_option(self):
        failed = self.boot(self.image('qed'), expected='ERROR')
        self.assertIn("'qed' is not a known image type",
                      failed['fault']['message'])


class TestRejectUnknownFormat(base.InsideNova):
    scheduler_options = {OURS: True,
                         ('image_type_filter', 'unknown_format'): 'reject'}

    def test_unknown_disk_format_fails_with_the_reason(self):
        failed = self.boot(self.image('qed'), expected='ERROR')
        message = failed['fault']['message']
        self.assertIn('No valid host', message)
        self.assertIn("image disk_format 'qed' is not a known image type",
                      message)
