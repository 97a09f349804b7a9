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

"""devstack's ``GIT_BASE`` on a machine that reaches only the registries.

devstack clones every service from ``$GIT_BASE/openstack/NAME.git``. Here
that is a directory of bare repositories made from what the package index
carries: each service's sdist is its whole tree, committed once and tagged
with its release so that pbr reports that version. devstack itself, the
requirements repository (upper-constraints), os-test-images (tempest's
image-format samples) and grenade are not on the index: they come from
the unmodified snapshots in ``../shared/upstream/``.

The requirements snapshot predates the services' releases: where a
release needs a library newer than its ``upper-constraints.txt`` pins
(nova 34.0.0 needs keystoneauth1>=5.16.0, the snapshot pins 5.15.0), the
pin is raised, in a second commit, to the version of the series' own
pinned set (``gate_cloud/constraints/<series>.txt``), and the gate says
so. Nothing else of the snapshot changes.

A series names its releases once (``SERIES``); the gate and the upgrade
job read them from here. The upgrade job serves two series from one
``GIT_BASE``: each repository gets one branch per series (``master`` for
2026.2, ``stable/2026.1`` for the series before), as devstack's and
grenade's stackrc ask for them.
"""

import os
import pathlib
import re
import subprocess
import tarfile
import tempfile

from gate_cloud import GateError

REPO = pathlib.Path(__file__).resolve().parent.parent
UPSTREAM = REPO.parent / 'shared' / 'upstream'
#: Each series' pinned set (``<series>.txt``, name==version lines): the
#: versions a raised upper-constraints pin takes.
CONSTRAINTS = pathlib.Path(__file__).resolve().parent / 'constraints'

#: The releases of each series, by devstack's repository name: what the
#: sdists on the package index are called and at which version.
SERIES = {
    '2026.2': {
        'devstack_branch': 'master',
        'snapshots': {'devstack': 'devstack-master-',
                      'requirements': 'requirements-master-',
                      'os-test-images': 'os-test-images-master-'},
        'sdists': {'nova': ('nova', '34.0.0'),
                   'placement': ('openstack-placement', '16.0.0'),
                   'keystone': ('keystone', '30.0.0'),
                   'glance': ('glance', '33.0.0'),
                   'neutron': ('neutron', '29.0.0'),
                   'tempest': ('tempest', '47.0.0')},
    },
    # grenade's base: devstack's stable branch clones every service from
    # that branch; tempest and os-test-images are branchless (master).
    '2026.1': {
        'devstack_branch': 'stable/2026.1',
        'snapshots': {'devstack': 'devstack-stable-2026.1-',
                      'requirements': 'requirements-stable-2026.1-'},
        'sdists': {'nova': ('nova', '33.0.2'),
                   'placement': ('openstack-placement', '15.0.0'),
                   'keystone': ('keystone', '29.1.0'),
                   'glance': ('glance', '32.0.0'),
                   'neutron': ('neutron', '28.0.2')},
    },
}
#: Git commits in these repositories carry this identity.
_IDENTITY = ['-c', 'user.name=image-type-filter gate',
             '-c', 'user.email=gate@localhost',
             # Trees unpacked from archives keep their owners' ids.
             '-c', 'safe.directory=*']
PIP_TIMEOUT = 1800


def snapshot(prefix):
    """The one archive in ``../shared/upstream/`` whose name starts with
    ``prefix``."""
    found = sorted(UPSTREAM.glob(prefix + '*.tar.gz'))
    if len(found) != 1:
        raise GateError('expected one %s*.tar.gz in %s, found %d'
                        % (prefix, UPSTREAM, len(found)))
    return found[0]


def unpack(archive, dest):
    """Unpack an archive whose one top folder is the tree; return it."""
    dest = pathlib.Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tops = {m.name.split('/', 1)[0] for m in tar.getmembers()}
        if len(tops) != 1:
            raise GateError('%s has %d top folders, expected one'
                            % (archive, len(tops)))
        tar.extractall(dest, filter='tar')
    return dest / tops.pop()


def download_sdists(series, cache, log):
    """The series' sdists, from the package index into ``cache``."""
    cache = pathlib.Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    missing = ['%s==%s' % (name, version)
               for name, version in SERIES[series]['sdists'].values()
               if not _sdist_in(cache, name, version)]
    if missing:
        with open(log, 'ab') as out:
            rc = subprocess.run(
                ['python3', '-m', 'pip', 'download', '-q', '--no-deps',
                 '--no-binary', ':all:', '-d', str(cache)] + missing,
                stdout=out, stderr=out, timeout=PIP_TIMEOUT).returncode
        if rc != 0:
            raise GateError('pip download of %s failed (exit %d): see %s'
                            % (' '.join(missing), rc, log))
    return {repo: _sdist_in(cache, name, version)
            for repo, (name, version) in SERIES[series]['sdists'].items()}


def _sdist_in(cache, name, version):
    stem = name.replace('-', '_')
    for candidate in (stem, name):
        path = pathlib.Path(cache) / ('%s-%s.tar.gz' % (candidate, version))
        if path.exists():
            return path
    return None


def _bare_repository(tree, dest, branch, tag=None, then=None):
    """Commit ``tree`` as one commit on ``branch`` (tagged ``tag``) of the
    bare repository ``dest``, made unless it exists (another series'
    branch is there); ``then`` = (file, text, why) writes one file anew in
    a second commit that says why."""
    git = ['git'] + _IDENTITY
    _git(git + ['init', '-q', '-b', branch, str(tree)])
    _git(git + ['-C', str(tree), 'add', '-A', '-f', '.'])
    _git(git + ['-C', str(tree), 'commit', '-q', '-m',
                'image-type-filter gate: %s' % (tag or branch)])
    if tag:
        _git(git + ['-C', str(tree), 'tag', '-a', '-m', tag, tag])
    if then and then[2]:
        path, text, why = then
        path.write_text(text)
        _git(git + ['-C', str(tree), 'commit', '-q', '-a', '-m',
                    'Raise the pins the released services need: ' +
                    ', '.join('%s %s to %s' % r for r in why)])
    if pathlib.Path(dest).exists():
        # Another series' branch: the same repository, one more branch.
        _git(git + ['-C', str(tree), 'push', '-q', '--follow-tags',
                    str(dest), branch])
        return
    _git(git + ['clone', '-q', '--bare', str(tree), str(dest)])


def snapshot_tree(prefix, dest):
    """The newest snapshot named ``prefix`` as a one-commit repository
    at ``dest`` (``commit_snapshot``)."""
    archive = snapshot(prefix)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as scratch:
        unpack(archive, scratch).rename(dest)
    commit_snapshot(dest, archive)


def commit_snapshot(tree, archive):
    """Make ``tree`` (unpacked from a ``git archive`` snapshot) a git
    repository of one commit that names the upstream commit (the
    archive's pax comment) at its date: devstack prints its own tree's
    last commit ("Change:"), as a Zuul checkout has it."""
    with tarfile.open(archive) as tar:
        upstream = tar.pax_headers.get('comment', 'unknown commit')
        when = '@%d' % tar.next().mtime
    env = dict(os.environ, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    git = ['git'] + _IDENTITY + ['-C', str(tree)]
    for argv in (['init', '-q', '-b', 'master'], ['add', '-A', '-f', '.'],
                 ['commit', '-q', '-m', 'Snapshot of %s at %s'
                  % (pathlib.Path(archive).name, upstream)]):
        result = subprocess.run(git + argv, capture_output=True, text=True,
                                timeout=600, env=env)
        if result.returncode != 0:
            raise GateError('git %s in %s failed: %s' % (
                argv[0], tree, result.stderr.strip()[-300:]))


def _git(argv):
    result = subprocess.run(argv, capture_output=True, text=True,
                            timeout=600)
    if result.returncode != 0:
        raise GateError('%s failed: %s' % (' '.join(argv[-3:]),
                                           result.stderr.strip()[-300:]))


def canonical(name):
    """A distribution's name as pip compares them (PEP 503)."""
    return re.sub(r'[-_.]+', '-', name).lower()


def pins(series):
    """{canonical name: version} of the series' pinned set."""
    path = CONSTRAINTS / ('%s.txt' % series)
    if not path.exists():
        raise GateError('no pinned set for series %r: %s' % (series, path))
    out = {}
    for line in path.read_text().splitlines():
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition('==')
        if not sep:
            raise GateError('%s: %r is not name==version' % (path, line))
        out[canonical(name.strip())] = version.strip()
    return out


def _version(text):
    return tuple(int(part) for part in re.findall(r'\d+', text)[:4])


def lower_bounds(requirements):
    """{canonical name: minimum version} of ``name>=X`` lines."""
    bounds = {}
    for line in requirements.splitlines():
        match = re.match(r'^\s*([A-Za-z0-9_.\-]+)\s*(?:\[[^\]]*\])?'
                         r'[^#;]*?>=\s*([0-9][0-9.]*)', line)
        if match:
            name = canonical(match.group(1))
            if _version(match.group(2)) > _version(bounds.get(name, '0')):
                bounds[name] = match.group(2)
    return bounds


def raise_constraints(upper_constraints, bounds, pins):
    """``upper_constraints`` with each pin below a bound raised to the
    pinned set's version; and what was raised, as (name, old, new)."""
    raised = []
    out = []
    for line in upper_constraints.splitlines():
        name, sep, rest = line.partition('===')
        key = canonical(name.strip())
        if sep and key in bounds:
            version, marker = (rest.split(';', 1) + [''])[:2]
            if _version(version) < _version(bounds[key]):
                new = pins.get(key)
                if new is None or _version(new) < _version(bounds[key]):
                    raise GateError(
                        'upper-constraints pins %s===%s, a release needs '
                        '>=%s, and the pinned set has %s' % (
                            name, version, bounds[key], new or 'none'))
                raised.append((name, version, new))
                line = '%s===%s%s' % (name, new,
                                      ';' + marker if marker else '')
        out.append(line)
    return '\n'.join(out) + '\n', raised


def make_git_base(series, git_base, cache, log):
    """Add to ``git_base`` (``GIT_BASE``'s directory) a branch of
    ``series`` in a bare repository per service, and in devstack's, the
    requirements repository's and os-test-images' beside them (made when
    missing); return the pins raised in upper-constraints as (name, old,
    new). The newest series comes first: a repository's first branch is
    its HEAD."""
    spec = SERIES[series]
    branch = spec['devstack_branch']
    git_base = pathlib.Path(git_base) / 'openstack'
    git_base.mkdir(parents=True, exist_ok=True)
    sdists = download_sdists(series, cache, log)
    with tempfile.TemporaryDirectory(prefix='gate-src-') as scratch:
        scratch = pathlib.Path(scratch)
        needs = []
        for name, archive in sdists.items():
            version = spec['sdists'][name][1]
            tree = unpack(archive, scratch / ('sdist-' + name))
            if (tree / 'requirements.txt').exists():
                needs.append((tree / 'requirements.txt').read_text())
            _bare_repository(tree, git_base / (name + '.git'), branch,
                             tag=version)
        bounds = lower_bounds('\n'.join(needs))
        raised = []
        for name, prefix in spec['snapshots'].items():
            tree = unpack(snapshot(prefix), scratch / name)
            if name == 'requirements':
                constraints = tree / 'upper-constraints.txt'
                text, raised = raise_constraints(
                    constraints.read_text(), bounds,
                    pins(series))
                _bare_repository(tree, git_base / (name + '.git'), branch,
                                 then=(constraints, text, raised))
            else:
                _bare_repository(tree, git_base / (name + '.git'), branch)
    return raised
