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

"""The reporter service says an outage once and its end once."""

import logging

from image_type_common import exceptions
from virt_capabilities import reporter
from virt_capabilities import service

LOGGER = 'virt_capabilities.service'


def said(caplog, level):
    return [r.getMessage() for r in caplog.records
            if r.name == LOGGER and r.levelno == level]


def failing_report(*errors):
    report = reporter.SyncReport()
    report.results = [reporter.SyncResult(uuid, error=exc)
                      for uuid, exc in errors]
    return report


def test_the_same_failure_cycle_after_cycle_is_said_once(caplog):
    caplog.set_level(logging.DEBUG, LOGGER)
    failures = service.FailureLog()
    down = exceptions.PlacementUnavailable('cannot reach Placement: refused')
    for _ in range(3):
        failures.failed(down, logging.WARNING, 'sync failed: %s', down)
        failures.cycle_done(False)
    assert said(caplog, logging.WARNING) == [
        'sync failed: cannot reach Placement: refused']
    assert len([m for m in said(caplog, logging.DEBUG)
                if m.startswith('still failing: ')]) == 2
    failures.cycle_done(True)
    assert said(caplog, logging.INFO) == [
        'sync recovered after 3 failed cycle(s)']


def test_another_kind_of_failure_is_news(caplog):
    caplog.set_level(logging.DEBUG, LOGGER)
    failures = service.FailureLog()
    for exc in (exceptions.PlacementUnavailable('refused'),
                exceptions.PlacementError('Placement answered 503'),
                exceptions.PlacementUnavailable('refused')):
        failures.failed(exc, logging.WARNING, '%s', exc)
        failures.cycle_done(False)
    assert said(caplog, logging.WARNING) == ['refused',
                                             'Placement answered 503']


def test_after_a_recovery_the_next_outage_is_said_again(caplog):
    caplog.set_level(logging.DEBUG, LOGGER)
    failures = service.FailureLog()
    down = exceptions.PlacementUnavailable('refused')
    for ok in (False, True, False):
        if not ok:
            failures.failed(down, logging.WARNING, '%s', down)
        failures.cycle_done(ok)
    assert said(caplog, logging.WARNING) == ['refused', 'refused']


def test_a_providers_error_is_said_once_per_provider(caplog):
    caplog.set_level(logging.DEBUG, LOGGER)
    failures = service.FailureLog()
    err = exceptions.PlacementError('Placement answered 500 to GET /x')
    for _ in range(2):
        assert service.summarize(failing_report(('u1', err), ('u2', err)),
                                 failures) == 1
        failures.cycle_done(False)
    assert said(caplog, logging.ERROR) == [
        'provider u1: Placement answered 500 to GET /x',
        'provider u2: Placement answered 500 to GET /x']


def test_a_one_shot_run_says_every_failure(caplog):
    caplog.set_level(logging.DEBUG, LOGGER)
    err = exceptions.PlacementError('Placement answered 500 to GET /x')
    for _ in range(2):
        assert service.summarize(failing_report(('u1', err))) == 1
    assert said(caplog, logging.ERROR) == [
        'provider u1: Placement answered 500 to GET /x'] * 2
