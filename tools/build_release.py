#!/usr/bin/env python3
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

"""Build the release artefacts an operator installs from.

Nothing is published under the name ``image-type-filter`` on the public
package index: an install that asks the index for that name gets whatever
someone else uploads under it. This builds the product (the repository's
root; not the demo distribution, which no cloud node needs) with
``python -m build`` into one directory, the wheel from the sdist as an
index would, and writes beside them:

* ``SHA256SUMS``: ``sha256sum -c SHA256SUMS`` checks the two files;
* ``requirements.txt``: ``image-type-filter==VERSION`` with the sha256 of
  the wheel and of the sdist, for pip's hash-checking mode::

      pip install --require-hashes --no-index --no-deps \\
          --find-links DIR -r DIR/requirements.txt

  (``--no-index``: the package comes from DIR alone; ``--no-deps``: pip's
  hash-checking mode would otherwise demand a hash for every dependency);
* ``dependencies.txt`` and ``dependencies-cli.txt``: what the wheel
  requires, without and with the ``cli`` extra, as its metadata says, for
  ``pip install -c CONSTRAINTS -r DIR/dependencies-cli.txt``: those come
  from the index (or a mirror) under their own names.

The version is pbr's, from git: the last tag, or before the first one
``setup.cfg``'s version with ``.devN`` (N commits since the first), so
every commit builds a version of its own and the documented install
command replaces an older build. Without git (a source tree unpacked
from an archive) pbr needs ``PBR_VERSION`` and this tool
``SOURCE_DATE_EPOCH``.

The build is reproducible: two clones of one commit give byte-identical
files. Every time stamp is ``SOURCE_DATE_EPOCH`` (by default the commit's
own time), the sdist's members are sorted, owned by root with modes 0644
or 0755 and gzipped without a time or name, and the wheel is built from
that sdist unpacked (``tests/repository/test_build_release.py`` builds
twice and compares).

Usage: ``python3 tools/build_release.py [--output DIR]`` (default
``dist/image-type-filter``; a directory named ``image-type-filter`` is
what ``contrib/kolla/template-overrides.j2`` looks for). Needs ``build``
(``pip install build``); the build itself fetches pbr and setuptools as
``pyproject.toml`` says. Exit 1 with one line if a step fails.
"""

import argparse
import email.parser
import gzip
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = 'image-type-filter'
#: File names start with the distribution name as wheels spell it.
PREFIX = 'image_type_filter-'
EXTRA = 'cli'


def version(built):
    """The version in the built files' names (pbr's, from git)."""
    [sdist] = [n for n in built if n.endswith('.tar.gz')]
    return sdist[len(PREFIX):-len('.tar.gz')]


def source_date_epoch():
    """SOURCE_DATE_EPOCH, or the time of the commit built."""
    if os.environ.get('SOURCE_DATE_EPOCH'):
        return int(os.environ['SOURCE_DATE_EPOCH'])
    proc = subprocess.run(['git', '-C', REPO, 'log', '-1', '--format=%ct'],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise SystemExit('ERROR build_release: %s has no git history: set '
                         'SOURCE_DATE_EPOCH, and PBR_VERSION for pbr'
                         % REPO)
    return int(proc.stdout)


def sha256(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 16), b''):
            digest.update(chunk)
    return digest.hexdigest()


def requirements(wheel):
    """(base, with the cli extra): the Requires-Dist lines of the wheel's
    metadata, markers evaluated for the extra only."""
    with zipfile.ZipFile(wheel) as z:
        [name] = [n for n in z.namelist()
                  if n.endswith('.dist-info/METADATA')]
        metadata = email.parser.Parser().parsestr(z.read(name).decode())
    base, cli = [], []
    for line in metadata.get_all('Requires-Dist') or []:
        requirement, _, marker = line.partition(';')
        marker = marker.strip().replace("'", '"')
        if not marker:
            base.append(requirement.strip())
        elif marker == 'extra == "%s"' % EXTRA:
            cli.append(requirement.strip())
        # Other extras (the tests') are not an operator's.
    return base, base + cli


def run_build(args, epoch):
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(epoch))
    proc = subprocess.run([sys.executable, '-m', 'build'] + args,
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
        raise SystemExit('ERROR build_release: python -m build %s failed '
                         '(is build installed? pip install build)'
                         % ' '.join(args))


def normalized_sdist(source, dest, epoch):
    """``source`` rewritten to ``dest`` with nothing of the build's
    machine or moment in it: members sorted, times ``epoch``, owner
    root, modes 0644 or 0755, a gzip header with neither time nor
    name."""
    tar = io.BytesIO()
    with tarfile.open(source) as src, tarfile.open(
            fileobj=tar, mode='w', format=tarfile.PAX_FORMAT) as out:
        for member in sorted(src.getmembers(), key=lambda m: m.name):
            data = src.extractfile(member) if member.isfile() else None
            member.mtime = epoch
            member.uid = member.gid = 0
            member.uname = member.gname = 'root'
            member.mode = 0o755 if (member.isdir() or member.mode & 0o111) \
                else 0o644
            member.pax_headers = {}
            out.addfile(member, data)
    with open(dest, 'wb') as raw:
        with gzip.GzipFile(filename='', mode='wb', fileobj=raw,
                           mtime=epoch) as gz:
            gz.write(tar.getvalue())


def build(output):
    """Build into ``output`` (replaced); returns its file names."""
    epoch = source_date_epoch()
    with tempfile.TemporaryDirectory() as work:
        run_build(['--sdist', '--outdir', os.path.join(work, 'sdist'),
                   REPO], epoch)
        [sdist] = os.listdir(os.path.join(work, 'sdist'))
        os.makedirs(os.path.join(work, 'out'))
        normalized = os.path.join(work, 'out', sdist)
        normalized_sdist(os.path.join(work, 'sdist', sdist), normalized,
                         epoch)
        # The wheel from the sdist, as an index would build it.
        unpacked = os.path.join(work, 'unpacked')
        with tarfile.open(normalized) as tar:
            [top] = {name.split('/')[0] for name in tar.getnames()}
            tar.extractall(unpacked)  # noqa: S202 - the sdist just built
        run_build(['--wheel', '--outdir', os.path.join(work, 'out'),
                   os.path.join(unpacked, top)], epoch)
        built = sorted(os.listdir(os.path.join(work, 'out')))
        expected = {PREFIX + version(built) + '.tar.gz',
                    PREFIX + version(built) + '-py3-none-any.whl'}
        if set(built) != expected:
            raise SystemExit('ERROR build_release: built %s, expected %s'
                             % (built, sorted(expected)))
        if os.path.exists(output):
            shutil.rmtree(output)
        os.makedirs(output)
        for name in built:
            shutil.copy(os.path.join(work, 'out', name), output)
    return built


def write(output, built):
    [wheel] = [n for n in built if n.endswith('.whl')]
    [sdist] = [n for n in built if n.endswith('.tar.gz')]
    sums = {name: sha256(os.path.join(output, name)) for name in built}
    with open(os.path.join(output, 'SHA256SUMS'), 'w') as f:
        for name in built:
            f.write('%s  %s\n' % (sums[name], name))
    with open(os.path.join(output, 'requirements.txt'), 'w') as f:
        f.write('# %s %s: the sha256 of the wheel and of the sdist beside '
                'this file. pip install --require-hashes --no-index '
                '--no-deps --find-links DIR -r DIR/requirements.txt\n'
                % (NAME, version(built)))
        f.write('%s==%s \\\n    --hash=sha256:%s \\\n    --hash=sha256:%s\n'
                % (NAME, version(built), sums[wheel], sums[sdist]))
    base, cli = requirements(os.path.join(output, wheel))
    for name, lines, what in (
            ('dependencies.txt', base, 'the request filters'),
            ('dependencies-cli.txt', cli,
             'the reporter and the command lines (the cli extra)')):
        with open(os.path.join(output, name), 'w') as f:
            f.write('# What %s %s needs for %s, from the index under '
                    'their own names: pip install -c CONSTRAINTS -r %s\n'
                    % (NAME, version(built), what, name))
            f.write(''.join(line + '\n' for line in lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--output', default=os.path.join(REPO, 'dist', NAME),
                        help='the directory to write (replaced whole); '
                        'default: %(default)s')
    args = parser.parse_args(argv)
    output = os.path.abspath(args.output)
    built = build(output)
    write(output, built)
    for name in sorted(os.listdir(output)):
        print(os.path.join(output, name))


if __name__ == '__main__':
    main()
