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

"""devstack's GIT_BASE made of sdists: what devstack's git_clone reads."""

import subprocess
import tarfile

import pytest

from gate_cloud import GateError
from gate_cloud import sources


def sdist(tmp_path, name='nova-34.0.0'):
    tree = tmp_path / 'src' / name
    (tree / 'nova').mkdir(parents=True)
    (tree / 'nova' / '__init__.py').write_text('')
    (tree / 'PKG-INFO').write_text('Name: nova\nVersion: 34.0.0\n')
    archive = tmp_path / (name + '.tar.gz')
    with tarfile.open(archive, 'w:gz') as tar:
        tar.add(tree, arcname=name)
    return archive


def git(*argv):
    return subprocess.run(['git', '-c', 'safe.directory=*'] + list(argv),
                          capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()


def test_a_release_becomes_a_tagged_branch_devstack_can_clone(tmp_path):
    tree = sources.unpack(sdist(tmp_path), tmp_path / 'unpacked')
    bare = tmp_path / 'base' / 'openstack' / 'nova.git'
    sources._bare_repository(tree, bare, 'master', tag='34.0.0')
    # As devstack's git_clone: clone, fetch the branch, check it out.
    clone = tmp_path / 'clone'
    git('clone', '-q', '--no-checkout', 'file://%s' % bare, str(clone))
    git('-C', str(clone), 'fetch', '-q', 'origin', 'master')
    git('-C', str(clone), 'checkout', '-q', 'FETCH_HEAD')
    assert (clone / 'nova' / '__init__.py').exists()
    # pbr reads the version from the tag on the commit it builds.
    assert git('-C', str(clone), 'describe', '--tags') == '34.0.0'


def test_two_series_are_two_branches_of_one_repository(tmp_path):
    """grenade's base devstack clones stable/2026.1 and its target
    master, from the same GIT_BASE: each branch is its release."""
    bare = tmp_path / 'base' / 'openstack' / 'nova.git'
    for branch, version in (('master', '34.0.0'),
                            ('stable/2026.1', '33.0.2')):
        tree = sources.unpack(sdist(tmp_path / branch.replace('/', '-')),
                              tmp_path / ('unpacked-' + version))
        (tree / 'VERSION').write_text(version)
        sources._bare_repository(tree, bare, branch, tag=version)
    for branch, version in (('master', '34.0.0'),
                            ('stable/2026.1', '33.0.2')):
        clone = tmp_path / ('clone-' + version)
        git('clone', '-q', '-b', branch, 'file://%s' % bare, str(clone))
        assert (clone / 'VERSION').read_text() == version
        assert git('-C', str(clone), 'describe', '--tags') == version
    assert git('--git-dir', str(bare), 'symbolic-ref', 'HEAD') == (
        'refs/heads/master')


def test_an_archive_with_two_top_folders_is_refused(tmp_path):
    archive = tmp_path / 'two.tar.gz'
    with tarfile.open(archive, 'w:gz') as tar:
        for name in ('a', 'b'):
            (tmp_path / name).mkdir()
            tar.add(tmp_path / name, arcname=name)
    with pytest.raises(GateError, match='2 top folders'):
        sources.unpack(archive, tmp_path / 'out')


def test_every_series_names_its_services_at_its_pinned_releases():
    """Each series' sdists are the releases its pinned set names; the
    branchless repositories (tempest, os-test-images) come from the
    newest series alone, as devstack's stable branches clone master."""
    for series, spec in sources.SERIES.items():
        assert {'nova', 'placement', 'keystone', 'glance',
                'neutron'} <= set(spec['sdists'])
        assert {'devstack', 'requirements'} <= set(spec['snapshots'])
        pins = sources.pins(series)
        for name, version in spec['sdists'].values():
            if sources.canonical(name) in pins:
                assert pins[sources.canonical(name)] == version, name
    newest = [s for s in sources.SERIES
              if sources.SERIES[s]['devstack_branch'] == 'master']
    assert len(newest) == 1
    branchless = [s for s in sources.SERIES
                  if 'tempest' in sources.SERIES[s]['sdists']
                  or 'os-test-images' in sources.SERIES[s]['snapshots']]
    assert branchless == newest


def test_a_pin_below_what_a_release_needs_is_raised_to_the_pinned_set():
    bounds = sources.lower_bounds(
        'pbr>=5.8.0 # Apache-2.0\n'
        'keystoneauth1>=5.16.0 # Apache-2.0\n'
        'oslo.versionedobjects[fixtures]>=3.12.0\n'
        'requests>=2.25.1;python_version>="3.9"\n')
    assert bounds['keystoneauth1'] == '5.16.0'
    assert bounds['oslo-versionedobjects'] == '3.12.0'
    text, raised = sources.raise_constraints(
        'pbr===7.0.3\nkeystoneauth1===5.15.0\n'
        'oslo.versionedobjects===3.11.0;python_version>="3.10"\n'
        'requests===2.32.5\n',
        bounds, {'keystoneauth1': '5.18.1', 'oslo-versionedobjects': '3.12.0'})
    assert text.splitlines() == [
        'pbr===7.0.3', 'keystoneauth1===5.18.1',
        'oslo.versionedobjects===3.12.0;python_version>="3.10"',
        'requests===2.32.5']
    assert raised == [('keystoneauth1', '5.15.0', '5.18.1'),
                      ('oslo.versionedobjects', '3.11.0', '3.12.0')]


def test_a_pin_the_pinned_set_cannot_raise_is_refused():
    with pytest.raises(GateError, match='keystoneauth1===5.15.0'):
        sources.raise_constraints('keystoneauth1===5.15.0\n',
                                  {'keystoneauth1': '5.16.0'},
                                  {'keystoneauth1': '5.15.0'})


def test_a_snapshot_tree_is_one_commit_naming_its_upstream_commit(tmp_path):
    """devstack prints its tree's last commit ("Change:"): the snapshot's
    upstream commit (git archive's pax comment), at its date."""
    commit = '493835a61a996731a7031861f80c7629acd5d6f2'
    (tmp_path / 'devstack').mkdir()
    (tmp_path / 'devstack' / 'stack.sh').write_text('#!/bin/bash\n')
    archive = tmp_path / 'devstack-master-493835a61a.tar.gz'
    with tarfile.open(archive, 'w:gz', format=tarfile.PAX_FORMAT,
                      pax_headers={'comment': commit}) as tar:
        for path in ('devstack', 'devstack/stack.sh'):
            info = tar.gettarinfo(tmp_path / path, arcname=path)
            info.mtime = 1784320212
            if info.isfile():
                with open(tmp_path / path, 'rb') as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    tree = sources.unpack(archive, tmp_path / 'out')
    sources.commit_snapshot(tree, archive)
    subject, date = git('-C', str(tree), 'log', '-1',
                        '--format=%s|%ct').strip().split('|')
    assert commit in subject and archive.name in subject
    assert date == '1784320212'
    assert git('-C', str(tree), 'status', '--porcelain').strip() == ''
