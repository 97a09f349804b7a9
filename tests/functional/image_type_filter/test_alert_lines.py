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

"""The lines nova-scheduler's request filters and ``image-type-filter
status`` write when Placement fails are lines the alerting page lists
(doc/source/admin/monitoring.rst), produced by running them, not read from
the source (tests/repository/test_log_lines_page.py reads every one)."""

import logging
import subprocess
import sys

from keystoneauth1 import adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint
import pytest

from image_type_common import placement_client
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import pipeline as filter_pipeline
from tests import helpers
from tests import monitoring_page


@pytest.fixture
def failing():
    """A Placement that answers 503 to everything."""
    server = helpers.RecordingServer(status=503)
    yield server
    server.stop()


def test_the_filters_facing_a_failing_placement_say_only_lines_the_page_lists(
        failing, caplog):
    """The request filters as nova-scheduler builds them, with isolation
    and two image-metadata families, over a Placement that answers 503,
    asked for a boot, and one of an image they cannot turn into traits:
    every WARNING and ERROR they log is a line the page lists at that
    level."""
    caplog.set_level(logging.WARNING, 'image_type_filter')
    auth = token_endpoint.Token(failing.endpoint, 'admin')
    client = placement_client.PlacementClient(adapter.Adapter(
        session.Session(auth=auth), service_type='placement'))
    pipeline = filter_pipeline.RequestFilterPipeline.from_settings(
        settings.FilterSettings.defaults(
            image_type_enabled=True, isolation_enabled=True,
            isolation_rules=('CUSTOM_TROVE',),
            image_metadata_families=('architecture', 'storage_bus'),
            traits_refresh_interval=3600),
        placement=client)
    for disk_format, properties in (('vmdk', {'hw_disk_bus': 'scsi'}),
                                    ('nosuchformat',
                                     {'hw_architecture': 'nosucharch'})):
        pipeline(None, our_filters.RequestSpec.for_boot(
            disk_format, properties=properties,
            extra_specs={'trait:CUSTOM_TROVE': 'required'}))
    matched, unlisted = monitoring_page.check_lines(
        [(r.levelname, r.getMessage()) for r in caplog.records])
    assert not unlisted, 'lines not on the page: %s' % unlisted
    assert {'could not create reserved trait', 'asking Placement again in',
            'maps to no known COMPUTE_IMAGE_TYPE_* trait',
            'no host is filtered by it'} <= matched


def test_status_that_could_not_check_says_a_line_the_page_lists(
        failing, tmp_path):
    conf = tmp_path / 'nova.conf'
    conf.write_text(failing.nova_conf_section())
    proc = subprocess.run(
        [sys.executable, '-m', 'image_type_filter.cmd.main', 'status',
         '--config-file', str(conf)], capture_output=True, text=True,
        timeout=120, env=helpers.clean_env())
    assert proc.returncode == 255, proc.stderr
    lines = [(line.split()[0], line) for line in proc.stderr.splitlines()
             if line.split()[:1] in (['WARNING'], ['ERROR'])]
    matched, unlisted = monitoring_page.check_lines(lines)
    assert lines and not unlisted, proc.stderr
    assert 'could not check:' in matched
