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

"""A patched copy of the installed ``placement`` package, beside it.

``ROOT_REQUIRED_PREFILTER`` is the patch this project ships (also at
contrib/placement/, with its README): Placement narrows ``root_required``
to the anchor roots before it builds provider summaries.

``patched_placement_path(patch_file)`` copies the installed ``placement``
package into a cache directory, applies ``patch_file`` there with
``patch -p1``, and returns the directory to put first on ``PYTHONPATH``:
a Python started with it imports the patched Placement, while the
installed package (and every other process) is left as it is.

The copy is keyed by the installed openstack-placement version and the
patch's sha256, built in a temporary directory and renamed into place in
one step, so it is reused by the next run and a half-built copy is never
used; two runs racing to build it both end up with the same one.

Standard library only, and ``patch`` on the PATH.
"""

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import tempfile

PACKAGE = 'placement'
#: The patches this package ships, by the name ``--placement-patch`` takes.
PATCHES = {
    'root-required-prefilter': os.path.join(
        os.path.dirname(os.path.abspath(__file__)), 'patches',
        'root-required-prefilter.patch'),
}
ROOT_REQUIRED_PREFILTER = PATCHES['root-required-prefilter']
DISTRIBUTION = 'openstack-placement'
PATCH_TIMEOUT = 60


#: ``--placement-patch``'s help, the same wherever it is offered.
ARGUMENT_HELP = (
    'Serve Placement with a patch applied, from a cached patched copy (the '
    'installed package is not touched): "root-required-prefilter" '
    '(contrib/placement/README.md: root_required as cheap as required), or '
    'a patch file.')


class OverlayError(RuntimeError):
    """The patched copy could not be built."""


def add_argument(parser, option='--placement-patch'):
    """``--placement-patch PATCH`` on an argparse parser (or group): the
    demo's and the benchmarks' one spelling. The value is a name from
    ``PATCHES`` or a file; ``patch_file`` resolves it."""
    return parser.add_argument(option, metavar='PATCH', help=ARGUMENT_HELP)


def default_cache_dir():
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(
        os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'image-type-filter', 'placement-overlays')


def installed_placement_dir():
    """The directory of the ``placement`` package this Python imports."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise OverlayError('openstack-placement is not installed')
    return list(spec.submodule_search_locations)[0]


def _without_missing_tests(patch_text, source):
    """The patch, less the parts for ``placement/tests`` when the installed
    package ships no tests (they cannot apply, and serving needs none)."""
    if os.path.isdir(os.path.join(source, 'tests')):
        return patch_text
    kept, keep = [], True
    for line in patch_text.splitlines(keepends=True):
        if line.startswith('diff --git '):
            keep = ' a/%s/tests/' % PACKAGE not in line
        if keep:
            kept.append(line)
    return ''.join(kept)


def patch_file(name_or_path):
    """A shipped patch by name, or a patch file's path; OverlayError
    naming the known ones otherwise."""
    if name_or_path in PATCHES:
        return PATCHES[name_or_path]
    if os.path.isfile(name_or_path):
        return name_or_path
    raise OverlayError('no Placement patch %r: give a file or one of %s'
                       % (name_or_path, ', '.join(sorted(PATCHES))))


def patched_placement_path(patch_file, cache_dir=None):
    """A directory holding ``placement/`` with ``patch_file`` applied; put
    it first on ``PYTHONPATH``. Built once per (version, patch)."""
    with open(patch_file, 'rb') as f:
        patch_bytes = f.read()
    source = installed_placement_dir()
    version = importlib.metadata.version(DISTRIBUTION)
    digest = hashlib.sha256(patch_bytes).hexdigest()
    cache_dir = cache_dir or default_cache_dir()
    final = os.path.join(cache_dir, '%s-%s-%s' % (PACKAGE, version, digest))
    if os.path.isdir(os.path.join(final, PACKAGE)):
        return final
    os.makedirs(cache_dir, exist_ok=True)
    building = tempfile.mkdtemp(prefix='.building-', dir=cache_dir)
    try:
        shutil.copytree(source, os.path.join(building, PACKAGE),
                        ignore=shutil.ignore_patterns('__pycache__'))
        patch_text = _without_missing_tests(
            patch_bytes.decode('utf-8'), source)
        try:
            result = subprocess.run(
                ['patch', '-p1', '--forward', '--batch', '--silent',
                 '-d', building],
                input=patch_text.encode('utf-8'), capture_output=True,
                timeout=PATCH_TIMEOUT)
        except FileNotFoundError:
            raise OverlayError('patch(1) is not installed') from None
        if result.returncode:
            output = (result.stdout + result.stderr).decode(
                errors='replace').strip()
            raise OverlayError('%s does not apply to %s %s: %s'
                               % (os.path.basename(patch_file), DISTRIBUTION,
                                  version, output.splitlines()[-1]
                                  if output else 'patch failed'))
        try:
            os.rename(building, final)
        except OSError:
            if not os.path.isdir(os.path.join(final, PACKAGE)):
                raise
            shutil.rmtree(building, ignore_errors=True)  # another run won
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return final
