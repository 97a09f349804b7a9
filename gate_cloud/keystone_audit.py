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

"""Who got a Keystone token, when, and with which program.

Keystone emits a CADF ``identity.authenticate`` event for every password
authentication (``services/keystone.py`` turns them on and sends them to
its own log through oslo.messaging's log driver): the user's name, the
outcome, the time and the client's user agent (keystoneauth1 puts the
program's name first: ``virt-capabilities``, ``nova-scheduler``). Read
here for the least-privilege phase (each reporter authenticated as its
own user) and the token figure (how often each reporter gets one).
"""

import calendar
import dataclasses
import json
import time

from gate_cloud.services import keystone

EVENT = 'oslo.messaging.notification.identity.authenticate'


@dataclasses.dataclass(frozen=True)
class Authentication:
    user: str
    success: bool
    at: float        # epoch seconds
    agent: str

    @property
    def program(self):
        """The first word of the user agent: the program's name."""
        return self.agent.split(' ', 1)[0] if self.agent else ''


def epoch(stamp):
    """CADF's eventTime (``2026-11-26T07:12:01.123456+0000``) in epoch
    seconds."""
    stamp = stamp.strip()
    whole, _, rest = stamp.partition('.')
    fraction = ''.join(c for c in rest if c.isdigit())[:6]
    seconds = calendar.timegm(time.strptime(whole[:19], '%Y-%m-%dT%H:%M:%S'))
    return seconds + (float('0.' + fraction) if fraction else 0.0)


def parse(line):
    """The Authentication a log line records, or None."""
    if EVENT not in line:
        return None
    text = line[line.find('{'):]
    try:
        message = json.loads(text)
    except ValueError:
        return None
    payload = message.get('payload') or message
    initiator = payload.get('initiator') or {}
    return Authentication(
        user=initiator.get('name') or initiator.get('username') or
        initiator.get('user_id') or '',
        success=payload.get('outcome') == 'success',
        at=epoch(payload.get('eventTime') or message.get('timestamp', '')),
        agent=(initiator.get('host') or {}).get('agent') or '')


def read(path=None):
    """Every authentication in Keystone's log, in order."""
    out = []
    try:
        with open(path or keystone.log_file(), 'rb') as f:
            for raw in f:
                found = parse(raw.decode('utf-8', 'replace'))
                if found is not None:
                    out.append(found)
    except FileNotFoundError:
        pass
    return out


def by_user(authentications, success=True):
    """{user: [epoch seconds of each authentication]}."""
    out = {}
    for a in authentications:
        if a.success == success:
            out.setdefault(a.user, []).append(a.at)
    return out
