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

"""The Nova releases this release supports: the one place they are written.

Both halves, the documentation (``doc/source/conf.py``'s substitutions)
and CI (``.ci/run``) read them. What cannot import Python is held to them
by ``tests/repository/test_nova_releases.py``: ``tox.ini``'s ``nova`` and
``nova-oldest`` pins, README, the release notes, and any Nova range
written anywhere else in the repository.

Standard library only: ``.ci/run`` reads it with a bare ``python3``.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Release:
    """One end of the supported range: CI boots servers through it with
    Nova's own functional harness (``tests/nova``)."""

    major: int
    #: The release CI installs (tox.ini's pin).
    version: str
    #: OpenStack's name for its series.
    series: str


OLDEST = Release(31, '31.0.0', '2025.1')
NEWEST = Release(34, '34.0.0', '2026.2')

#: The range as messages and documents write it, long and short.
SUPPORTED = 'Nova %s (%s) to %s (%s)' % (OLDEST.version, OLDEST.series,
                                         NEWEST.version, NEWEST.series)
RANGE = 'Nova %d to %d' % (OLDEST.major, NEWEST.major)
TESTED = '%s and %s' % (OLDEST.version, NEWEST.version)


def supports(major):
    """Whether ``major`` (an int, or None) is a supported release."""
    return major is not None and OLDEST.major <= major <= NEWEST.major
