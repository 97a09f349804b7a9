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

"""Times read from the services' own log lines.

nova-scheduler's DEBUG log opens every ``select_destinations`` with
"Starting to schedule for instances" and tags every line it logs while
scheduling with the boot's request id (the one nova-api answered the boot
with): request filters, the Placement query, host filters, weighers, the
claim. One request's time is from that first line to the last line
carrying its id. Nova's ``scheduler.select_destinations`` notifications
would miss the request filters, which run before them; Nova's own
"Request filter %r took %.1f seconds" line is too coarse (0.1 s).

Placement's request log opens each request with "Starting request:" and
closes it with its status line; both carry Placement's own request id,
and the global request id nova-scheduler sent (again the boot's).

The lines are journald's (``journalctl -o short-iso-precise``: a
microsecond timestamp, the process, the message), devstack's colours
taken off.
"""

import datetime
import re

ANSI = re.compile(r'\x1b\[[0-9;]*m')
#: oslo.log's context as devstack formats it: [global local project user].
IDS = re.compile(r'\[(\S+) (req-[0-9a-f-]{36})\b')
SCHEDULE_START = 'Starting to schedule for instances'
#: What nova-compute tells the scheduler afterwards, under the boot's id.
LATER_CASTS = ('HostManager.update_instance_info',
               'HostManager.delete_instance_info',
               'HostManager.sync_instance_info')
PLACEMENT_START = 'Starting request: '
PLACEMENT_END = '" status: '


def parse_line(line):
    """(seconds since the epoch, message) of one journal line, or None
    for a line that is not one (journalctl's "-- Boot ..." markers)."""
    line = ANSI.sub('', line.rstrip('\n'))
    stamp, _, rest = line.partition(' ')
    try:
        when = datetime.datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return None
    _, sep, message = rest.partition(': ')
    return (when, message) if sep else None


def ids(message):
    """(global request id or 'None', local request id) of a context line,
    or None."""
    match = IDS.search(message)
    return match.groups() if match else None


def request_lines(lines):
    """(when, message, global request id, local request id) of each
    journal line that carries a request's context."""
    for line in lines:
        parsed = parse_line(line)
        found = parsed and ids(parsed[1])
        if found:
            yield parsed + found


def scheduler_times(lines):
    """{request id: seconds nova-scheduler spent on it}, for every request
    whose start is among ``lines``."""
    start, last = {}, {}
    for when, message, _, request in request_lines(lines):
        if SCHEDULE_START in message and request not in start:
            start[request] = when
        if request in start and not any(c in message for c in LATER_CASTS):
            last[request] = when
    return {r: last[r] - start[r] for r in start}


#: This project's request filters time themselves, one DEBUG line each
#: (image_type_filter/scheduler/pipeline.py).
OWN_FILTER = re.compile(r'request filter \S+ took ([0-9.]+) us')


def own_filter_times(lines):
    """{request id: seconds this project's request filters took in it},
    from their own lines: the part of the scheduler's time that is ours."""
    out = {}
    for _, message, _, request in request_lines(lines):
        match = OWN_FILTER.search(message)
        if match:
            out[request] = out.get(request, 0.0) + float(
                match.group(1)) / 1e6
    return out


def placement_times(lines, path='/allocation_candidates'):
    """{global request id: [seconds Placement took to answer each request
    to ``path`` made under it]}."""
    opened = {}
    out = {}
    for when, message, global_id, local in request_lines(lines):
        if path not in message:
            continue
        if PLACEMENT_START in message:
            opened[local] = when
        elif PLACEMENT_END in message and local in opened:
            out.setdefault(global_id, []).append(when - opened.pop(local))
    return out


def user_requests(lines, user):
    """How many requests Placement answered for ``user`` (its request
    log's status lines, whose context names the user)."""
    count = 0
    for line in lines:
        parsed = parse_line(line)
        if parsed and PLACEMENT_END in parsed[1] and re.search(
                r'\[\S+ req-\S+ \S+ %s\]' % re.escape(user), parsed[1]):
            count += 1
    return count


def percentile(values, pct):
    """The ``pct`` percentile, linearly interpolated between the closest
    ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return None
    pos = (len(ordered) - 1) * pct / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summary(values, scale=1000.0):
    """p50, p90, p99, mean and count, in milliseconds by default."""
    if not values:
        return {'count': 0}
    out = {'p%d' % p: round(percentile(values, p) * scale, 1)
           for p in (50, 90, 99)}
    out['mean'] = round(sum(values) / len(values) * scale, 1)
    out['count'] = len(values)
    return out
