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

"""The supported Nova releases are written once, and the rest agrees.

``image_type_common.nova_releases`` is the one place: the code and the
documentation (a Sphinx substitution) read it, ``.ci/run`` reads it. What
cannot import it is held to it here: ``tox.ini``'s two pins, README's
sentence, the gate's newest pinned series, and every Nova range written
anywhere in the repository (release notes, comments, Markdown), so that
a range can only be changed in one place and every copy follows or fails.
"""

import configparser
import os
import re

from image_type_common import nova_releases
from tests import text_files

#: A Nova range as prose writes it: "Nova 31 to 34", "Nova 31.0.0
#: (2025.1) to 34.0.0 (2026.2)", "supported Nova (31 to 34)".
RANGE = re.compile(
    r'\bnova\s+(?:releases?\s+)?\(?(\d+)(\.\d+\.\d+)?(?:\s+\((\d{4}\.\d)\))?'
    r'\s+to\s+(\d+)(\.\d+\.\d+)?(?:\s+\((\d{4}\.\d)\))?', re.I)


def ranges_written(text):
    """(line number, the range as written, what it says) for each range."""
    for match in RANGE.finditer(text):
        said = (int(match.group(1)), match.group(2), match.group(3),
                int(match.group(4)), match.group(5), match.group(6))
        yield (text.count('\n', 0, match.start()) + 1,
               ' '.join(match.group(0).split()), said)


def is_supported(said):
    """Whether what a written range says is the supported one (the
    versions and series, where it gives them)."""
    oldest, newest = nova_releases.OLDEST, nova_releases.NEWEST
    expected = (oldest.major, oldest.version[len(str(oldest.major)):],
                oldest.series, newest.major,
                newest.version[len(str(newest.major)):], newest.series)
    return all(got is None or got == want
               for got, want in zip(said, expected, strict=True))


def test_every_nova_range_written_is_the_supported_one():
    wrong = ['%s:%d: "%s" is not %s (image_type_common/nova_releases.py)'
             % (path, line, written, nova_releases.SUPPORTED)
             for path, text in text_files.text_files()
             for line, written, said in ranges_written(text)
             if not is_supported(said)]
    assert not wrong, '\n'.join(wrong)


def test_a_range_that_drifted_is_caught():
    """The check itself, on what a stale copy would say (written in
    pieces, so this file holds no range)."""
    stale = ('Supported: Nova 31.0.0 (2025.1) to ' '33.0.0 (2026.1).\n'
             'every supported Nova (30 to ' '34) reports them\n'
             'the drivers of nova 31 to ' '34 ship\n')
    found = list(ranges_written(stale))
    assert [line for line, _, said in found if not is_supported(said)] \
        == [1, 2]
    assert len(found) == 3


def test_toxs_nova_pins_are_the_two_ends():
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(os.path.join(text_files.REPO, 'tox.ini'))
    for env, end in (('nova', nova_releases.NEWEST),
                     ('nova-oldest', nova_releases.OLDEST)):
        deps = tox['testenv:%s' % env]['deps'].split()
        assert deps == ['nova==%s' % end.version], env


def test_readme_says_the_supported_range():
    sentence = 'Supported: **%s**' % nova_releases.SUPPORTED
    with open(os.path.join(text_files.REPO, 'README.md')) as f:
        assert sentence in f.read(), 'README.md lacks "%s"' % sentence


def test_the_gates_newest_series_runs_the_newest_nova():
    """The gate cloud boots through the newest release too."""
    constraints = os.path.join(text_files.REPO, 'gate_cloud', 'constraints')
    newest = max(os.listdir(constraints))
    assert newest == nova_releases.NEWEST.series + '.txt'
    with open(os.path.join(constraints, newest)) as f:
        assert 'nova==%s' % nova_releases.NEWEST.version in f.read().split()


def test_the_range_is_the_majors_between_the_ends():
    assert [m for m in range(25, 45) if nova_releases.supports(m)] == list(
        range(nova_releases.OLDEST.major, nova_releases.NEWEST.major + 1))
    assert not nova_releases.supports(None)
