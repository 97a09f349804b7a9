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

"""Log-only mode (``[image_type_filter] enforce = False``): one INFO line
per request and checked rebuild saying what the filters would do (beyond
what Nova's own added), in doc/source/install/scheduler.rst's wording. The
wording is an interface: the gate and operators grep it (``PATTERN``).
"""

import re

from image_type_filter.scheduler import pipeline

PREFIX = 'image-type-filter log-only'
ADD, REFUSE, NOTHING = 'would add', 'would refuse', 'would change nothing'
#: Matches every line this module writes.
PATTERN = re.compile(
    r'image-type-filter log-only: server (?P<server>\S+): '
    r'(?P<verdict>would add|would refuse|would change nothing)'
    r'(?:: (?P<detail>.*))?$')


def _line(server, verdict, detail=None):
    return '%s: server %s: %s%s' % (PREFIX, server or 'unknown', verdict,
                                    ': %s' % detail if detail else '')


def boot_line(server, outcome):
    """The line for a request the filters ran on (a pipeline Outcome)."""
    if outcome.refusal is not None:
        return _line(server, REFUSE, outcome.refusal)
    parts = ['%s=%s' % (name, ','.join(outcome.added[name]))
             for name in pipeline.CONSTRAINTS if outcome.added.get(name)]
    if not parts:
        return _line(server, NOTHING)
    return _line(server, ADD, ' '.join(parts))


def rebuild_line(server, image, host, reason):
    """The line for a rebuild the rebuild filter checked on ``host``."""
    if reason is None:
        return _line(server, NOTHING)
    return _line(server, REFUSE, 'rebuild to image %s on host %s: %s'
                 % (image, host, reason))
