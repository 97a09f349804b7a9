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

"""Times read from the services' own journal lines: real lines, captured
from a fleet run (``python3 -m benchmarks.fleet run --small``, 2026-12-07)
in ``journal/``: nova-scheduler's for two boots scheduled at once, and
Placement's for the same boots and for the reporters' user."""

import os

import pytest

from benchmarks.fleet import schedlog

HERE = os.path.join(os.path.dirname(__file__), 'journal')


def lines(name):
    with open(os.path.join(HERE, name)) as f:
        return f.read().splitlines()


SCHEDULER = lines('nova-scheduler.txt')
PLACEMENT = lines('placement-api.txt')
#: The two boots' request ids (nova-api's answers to their POSTs), and
#: the times of the first line each has in the scheduler's journal and of
#: its last before nova-compute's later ``update_instance_info`` cast,
#: read off the captured file by hand.
BOOTS = {
    'req-6273e261-e8b5-4a87-a5e3-56830710f788': (13.982749, 15.528022),
    'req-b06d8de1-e426-4279-89b8-3f0eb03abb5c': (14.807218, 15.892463),
}
#: Placement's "Starting request" and status lines of each boot's
#: allocation-candidates query, likewise.
CANDIDATES = {
    'req-6273e261-e8b5-4a87-a5e3-56830710f788': (14.273213, 14.510966),
    'req-b06d8de1-e426-4279-89b8-3f0eb03abb5c': (14.872255, 15.179485),
}


def test_a_line_is_its_time_and_message():
    when, message = schedlog.parse_line(SCHEDULER[0])
    assert when > 1.7e9
    assert not message.startswith(' ')
    assert schedlog.parse_line('-- Boot 0123 --') is None


def test_each_request_is_first_to_last_line():
    times = schedlog.scheduler_times(SCHEDULER)
    assert set(times) == set(BOOTS)
    for request, (first, last) in BOOTS.items():
        assert times[request] == pytest.approx(last - first, abs=1e-6)


def test_placement_answers_each_candidates_query():
    times = schedlog.placement_times(PLACEMENT)
    assert set(times) == set(CANDIDATES)
    for request, (first, last) in CANDIDATES.items():
        assert times[request] == [pytest.approx(last - first, abs=1e-6)]


def test_the_later_cast_is_not_the_request():
    kept = [line for line in SCHEDULER
            if 'update_instance_info' not in line]
    assert len(kept) < len(SCHEDULER)
    assert schedlog.scheduler_times(kept) == schedlog.scheduler_times(
        SCHEDULER)


def test_our_request_filters_own_time():
    # 48.8 + 5.6 + 15.9 us and 76.1 + 7.7 + 21.6 us in the captured lines.
    own = schedlog.own_filter_times(SCHEDULER)
    assert own == {
        'req-6273e261-e8b5-4a87-a5e3-56830710f788': pytest.approx(70.3e-6),
        'req-b06d8de1-e426-4279-89b8-3f0eb03abb5c': pytest.approx(105.4e-6),
    }


def test_requests_of_a_user():
    assert schedlog.user_requests(PLACEMENT, 'fleet-reporter') == 3
    assert schedlog.user_requests(PLACEMENT, 'nova') == 3
    assert schedlog.user_requests(PLACEMENT, 'reporter') == 0


def test_percentiles_interpolate_as_numpy():
    values = [0.1 * i for i in range(1, 11)]
    assert schedlog.percentile(values, 50) == pytest.approx(0.55)
    assert schedlog.percentile(values, 90) == pytest.approx(0.91)
    assert schedlog.percentile(values, 99) == pytest.approx(0.991)
    assert schedlog.percentile([3.0], 99) == 3.0
    assert schedlog.percentile([], 50) is None
    assert schedlog.summary([0.5, 1.5]) == {
        'p50': 1000.0, 'p90': 1400.0, 'p99': 1490.0, 'mean': 1000.0,
        'count': 2}
