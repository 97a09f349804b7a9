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

"""The API services' access logs (``wsgi_server.ACCESS_FORMAT``), read.

Placement's is the record of what every client really asked: the query
string of each ``GET /allocation_candidates`` as nova-scheduler encoded
it, with the global request id of the boot it scheduled (nova-scheduler
sends its request context's), and the Keystone user and roles of every
request. The phases read it from a mark (a line count taken before they
acted) on, so a line is never counted twice.
"""

import dataclasses
import re

from gate_cloud import wsgi_server

_LINE = re.compile(
    r'^\[(?P<time>[^\]]+)\] "(?P<method>\S+) (?P<target>\S+) [^"]*" '
    r'(?P<status>\d{3}) (?P<seconds>\S+) "(?P<agent>[^"]*)" '
    r'(?P<request_id>\S+) user=(?P<user>\S*) roles=(?P<roles>\S*)$')
CANDIDATES = '/allocation_candidates'


@dataclasses.dataclass(frozen=True)
class Request:
    """One line of an access log."""
    method: str
    target: str
    status: int
    agent: str
    request_id: str
    user: str
    roles: frozenset

    @property
    def path(self):
        return self.target.split('?', 1)[0]

    @property
    def query(self):
        return self.target.split('?', 1)[1] if '?' in self.target else ''


def parse(line):
    """A Request, or None for a line not in ACCESS_FORMAT."""
    match = _LINE.match(line.rstrip('\n'))
    if match is None:
        return None
    roles = match['roles']
    return Request(method=match['method'], target=match['target'],
                   status=int(match['status']), agent=match['agent'],
                   request_id=match['request_id'], user=match['user'],
                   roles=frozenset(r for r in roles.split(',')
                                   if r and r != '-'))


def path(service):
    return wsgi_server.access_log(service)


def mark(service):
    """How many lines the log has now: read from here on."""
    try:
        with open(path(service), 'rb') as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def since(service, start=0, log=None):
    """Every request logged after line ``start`` (``log``: another file
    in the same format, for tests)."""
    out = []
    try:
        with open(log or path(service), 'rb') as f:
            for number, raw in enumerate(f):
                if number < start:
                    continue
                request = parse(raw.decode('utf-8', 'replace'))
                if request is not None:
                    out.append(request)
    except FileNotFoundError:
        pass
    return out


def candidate_queries(requests, request_id):
    """The ``GET /allocation_candidates`` targets sent under one global
    request id (one boot's), in order."""
    return [r.target for r in requests
            if r.method == 'GET' and r.path == CANDIDATES
            and r.request_id == request_id]
