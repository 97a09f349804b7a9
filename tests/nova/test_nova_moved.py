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

"""A Nova where an internal the filters use has moved: Nova's own code,
with the internal taken away or no longer used (``fixtures.MonkeyPatch``),
and what nova-scheduler then does and logs.

* A name missing at start-up: one ERROR line naming the Nova release and
  the name; under enforced isolation nova-scheduler does not start,
  otherwise it schedules as Nova alone.
* A Nova that no longer runs ``ALL_REQUEST_FILTERS``: every request is
  checked by ImageTypeRebuildFilter; under enforced isolation it ends in
  "No valid host" instead of on a reserved host, otherwise it goes through
  and the ERROR line is logged once.
"""

from importlib import metadata

import pytest

pytest.importorskip('nova')

import fixtures  # noqa: E402
from nova.scheduler import manager  # noqa: E402
from nova.scheduler import request_filter  # noqa: E402

from image_type_filter.nova import compat  # noqa: E402
from image_type_filter.nova import integration  # noqa: E402
from tests.nova import base  # noqa: E402

OURS = ('scheduler', 'filter_hosts_by_image_type_support')
RESERVED = 'CUSTOM_TROVE'
TAG = {'trait:%s' % RESERVED: 'required'}
ISOLATION = {OURS: True, ('image_isolation', 'enabled'): True,
             ('image_isolation', 'rules'): [RESERVED]}
NOVA = 'Nova %s' % metadata.version('nova')
LIST = 'nova.scheduler.request_filter.ALL_REQUEST_FILTERS'


def error_lines(test, text):
    return [line for line in test.stdlog.logger.output.splitlines()
            if ' ERROR ' in line and text in line]


class RenamedList(fixtures.Fixture):
    """A Nova that renamed ALL_REQUEST_FILTERS (and reads the new name)."""

    def _setUp(self):
        renamed = list(request_filter.ALL_REQUEST_FILTERS)

        def process_reqspec(ctxt, request_spec):
            for one in renamed:
                one(ctxt, request_spec)

        self.useFixture(fixtures.MonkeyPatch(
            LIST, fixtures.MonkeyPatch.delete))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.request_filter.REQUEST_FILTERS', renamed))
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.request_filter.process_reqspec', process_reqspec))


class ListNoLongerRun(fixtures.Fixture):
    """A Nova whose process_reqspec runs a list of its own: Nova's own
    filters, never anything appended to ALL_REQUEST_FILTERS."""

    def _setUp(self):
        own = [f for f in request_filter.ALL_REQUEST_FILTERS
               if not getattr(f, integration.MARK, False)]

        def process_reqspec(ctxt, request_spec):
            for one in own:
                one(ctxt, request_spec)

        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.request_filter.process_reqspec', process_reqspec))


class TestMissingUnderIsolation(base.InsideNova):
    """nova-scheduler starting (``SchedulerManager()``, as its service
    does) in a Nova that lacks a name: it stops, with one ERROR line."""

    scheduler_options = dict(ISOLATION)

    def assert_start_up_stops(self, name):
        error = self.assertRaises(compat.NovaIncompatible,
                                  manager.SchedulerManager)
        [line] = error_lines(self, 'cannot add its filters')
        self.assertIn(NOVA, line)
        self.assertIn(name, line)
        self.assertIn('nova-scheduler stops here', line)
        self.assertEqual(str(error), line[line.index('image-type-filter'):])

    def test_the_list_renamed(self):
        self.useFixture(RenamedList())
        self.assert_start_up_stops(LIST)

    def test_request_filter_failed_gone(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova.exception.RequestFilterFailed',
            fixtures.MonkeyPatch.delete))
        self.assert_start_up_stops('nova.exception.RequestFilterFailed')

    def test_request_spec_root_required_gone(self):
        # (Nova's own code reads it too, but only once a request comes.)
        name = 'nova.objects.request_spec.RequestSpec.root_required'
        self.useFixture(fixtures.MonkeyPatch(name,
                                             fixtures.MonkeyPatch.delete))
        self.assert_start_up_stops(name)

    def test_a_name_with_a_fallback_only_warns(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova.scheduler.request_filter.trace_request_filter',
            fixtures.MonkeyPatch.delete))
        manager.SchedulerManager()
        self.assertEqual([], error_lines(self, 'image-type-filter'))
        self.assertIn('trace_request_filter (without it: Nova\'s debug line',
                      self.stdlog.logger.output)
        self.assertEqual(1, len(integration.installed_filters()))


class TestMissingWithoutIsolation(base.InsideNova):
    """The same renamed list, image type only: nova-scheduler starts and
    schedules as Nova alone, and says so once."""

    scheduler_options = {OURS: True}

    def _setup_scheduler_service(self):
        self.useFixture(RenamedList())
        return super()._setup_scheduler_service()

    def test_boots_go_through_as_nova_alone(self):
        self.boot(base.VHD_IMAGE)  # enforced, "No valid host"
        [line] = error_lines(self, 'cannot add its filters')
        self.assertIn(NOVA, line)
        self.assertIn(LIST, line)
        self.assertIn('runs without them', line)
        self.assertEqual([], integration.installed_filters())


class TestListNoLongerRunUnderIsolation(base.InsideNova):
    scheduler_options = dict(ISOLATION)

    def setUp(self):
        super().setUp()
        self._start_compute('trove-host')
        self.assertEqual(0, self.run_reporter(
            'trove-host',
            '[virt_capabilities]\ncustom_traits = %s\n' % RESERVED))

    def test_no_request_lands_anywhere_and_each_is_named(self):
        # Placement is asked without "!CUSTOM_TROVE", so it offers the
        # reserved host: the rebuild filter refuses every host instead.
        self.useFixture(ListNoLongerRun())
        failed = [self.boot(base.RAW_IMAGE, expected='ERROR'),
                  self.boot(self.image('raw', **TAG), expected='ERROR')]
        for server in failed:
            self.assertIn('No valid host', server['fault']['message'])
            [line] = error_lines(self, 'server %s' % server['id'])
            self.assertIn('did not run its request filters', line)
            self.assertIn(NOVA, line)
            self.assertIn('every host is refused', line)

    def test_the_same_boots_land_when_nova_runs_the_list(self):
        self.assertEqual('compute', self.host_of(self.boot(base.RAW_IMAGE)))
        self.assertEqual('trove-host', self.host_of(self.boot(
            self.image('raw', **TAG))))
        self.assertEqual([], error_lines(self, 'image-type-filter'))


class TestListNoLongerRunWithoutIsolation(base.InsideNova):
    scheduler_options = {OURS: True}

    def test_boots_go_through_and_the_error_is_logged_once(self):
        self.useFixture(ListNoLongerRun())
        self.boot(base.VHD_IMAGE)
        self.boot(base.VHD_IMAGE)
        [line] = error_lines(self, 'did not run its request filters')
        self.assertIn('scheduled without them', line)
