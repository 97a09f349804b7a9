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

"""placement_runner.patched: a patched copy of the installed
placement package, built once per patch and never half-built."""

import hashlib
import importlib.util
import os
import shutil

import pytest

from placement_runner import patched
from tests import helpers

REPO = helpers.REPO
CONTRIB = os.path.join(REPO, 'contrib', 'placement')
PATCH = os.path.join(CONTRIB, 'root-required-prefilter.patch')

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec('placement') is None,
                       reason='openstack-placement is not installed'),
    pytest.mark.skipif(shutil.which('patch') is None,
                       reason='patch(1) is not installed'),
]


@pytest.fixture(scope='module')
def overlay():
    return patched


def test_patched_copy_is_built_once_and_reused(overlay, tmp_path,
                                               monkeypatch):
    path = overlay.patched_placement_path(PATCH, str(tmp_path))
    with open(PATCH, 'rb') as f:
        assert path.endswith(hashlib.sha256(f.read()).hexdigest())
    with open(os.path.join(path, 'placement', 'objects',
                           'allocation_candidate.py')) as f:
        assert 'get_sharing_providers(rg_ctx.context)' in f.read()
    installed = overlay.installed_placement_dir()
    with open(os.path.join(installed, 'objects',
                           'allocation_candidate.py')) as f:
        assert 'get_sharing_providers(rg_ctx.context)' not in f.read()
    assert os.listdir(tmp_path) == [os.path.basename(path)]

    def no_copy(*args, **kwargs):
        raise AssertionError('rebuilt instead of reused')

    monkeypatch.setattr(overlay.shutil, 'copytree', no_copy)
    assert overlay.patched_placement_path(PATCH, str(tmp_path)) == path


def test_patch_that_does_not_apply_leaves_nothing(overlay, tmp_path):
    bad = tmp_path / 'bad.patch'
    bad.write_text(
        '--- a/placement/__init__.py\n+++ b/placement/__init__.py\n'
        '@@ -1,1 +1,1 @@\n-no such line in the file\n+a new line\n')
    cache = tmp_path / 'cache'
    with pytest.raises(overlay.OverlayError, match='does not apply'):
        overlay.patched_placement_path(str(bad), str(cache))
    assert os.listdir(cache) == []


def test_test_changes_are_dropped_when_no_tests_are_installed(overlay,
                                                              tmp_path):
    text = ('header\n'
            'diff --git a/placement/x.py b/placement/x.py\n+code\n'
            'diff --git a/placement/tests/t.py b/placement/tests/t.py\n'
            '+test\n'
            'diff --git a/placement/y.py b/placement/y.py\n+more code\n')
    (tmp_path / 'placement').mkdir()
    source = str(tmp_path / 'placement')
    assert overlay._without_missing_tests(text, source) == (
        'header\ndiff --git a/placement/x.py b/placement/x.py\n+code\n'
        'diff --git a/placement/y.py b/placement/y.py\n+more code\n')
    os.mkdir(os.path.join(source, 'tests'))
    assert overlay._without_missing_tests(text, source) == text


def test_the_shipped_patch_is_the_one_contrib_documents():
    assert os.path.samefile(PATCH, patched.ROOT_REQUIRED_PREFILTER)
    assert patched.patch_file('root-required-prefilter') == \
        patched.ROOT_REQUIRED_PREFILTER
    with pytest.raises(patched.OverlayError, match='root-required-prefilter'):
        patched.patch_file('no-such-patch')
