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

"""The release notes are ones a first release can ship.

0.1.0 is the first release: nobody ran an earlier one, so no note fixes a
bug, deprecates an option or says how something changed ("now", "no
longer"); the set has one prelude; and reno's own sections are the only
ones used. A note that breaks this is rewritten to say what 0.1.0 does.
"""

import os
import re

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
NOTES = os.path.join(REPO, 'releasenotes', 'notes')
#: reno's sections that make sense before anything was released.
FIRST_RELEASE_SECTIONS = {'prelude', 'features', 'upgrade', 'issues',
                          'security', 'other'}
#: Words that describe a change from a version nobody had.
CHANGE_WORDS = re.compile(
    r'\b(now|no longer|previously|used to|fixed|fixes|renamed|'
    r'any more|anymore)\b|\(not \d+\)', re.IGNORECASE)


def _notes():
    return sorted(name for name in os.listdir(NOTES)
                  if name.endswith('.yaml'))


def _load(name):
    with open(os.path.join(NOTES, name), encoding='utf-8') as f:
        return yaml.safe_load(f)


@pytest.mark.parametrize('name', _notes())
def test_note_uses_only_first_release_sections(name):
    sections = set(_load(name))
    assert sections <= FIRST_RELEASE_SECTIONS, (
        '%s has %s: a first release fixes and deprecates nothing'
        % (name, sorted(sections - FIRST_RELEASE_SECTIONS)))


@pytest.mark.parametrize('name', _notes())
def test_note_says_what_the_release_does_not_how_it_changed(name):
    for section, body in _load(name).items():
        texts = [body] if isinstance(body, str) else body
        for text in texts:
            # "(as Glance has it now)" is about the present, not a
            # change: a word that closes a parenthesis is let through.
            found = [m.group(0) for m in CHANGE_WORDS.finditer(text)
                     if text[m.end():m.end() + 1] != ')']
            assert not found, '%s [%s] says %s: %s' % (
                name, section, found, text[:120])


def test_there_is_exactly_one_prelude():
    preludes = [name for name in _notes() if 'prelude' in _load(name)]
    assert len(preludes) == 1, preludes
