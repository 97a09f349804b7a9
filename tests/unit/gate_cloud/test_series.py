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

"""The gate cloud's versions: one pinned set per OpenStack series.

A set must pin everything its virtualenv installs (each service's PyPI
needs, the clients, what the editable installs pull in), the releases it
names, and nothing is installed when it does not.
"""

import configparser
import re
import tomllib

import pytest

from gate_cloud import cloud
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import series


def requirement_names(lines):
    return [re.split(r'[<>=!~;\[ ]', line.strip(), maxsplit=1)[0]
            for line in lines if line.strip() and
            not line.strip().startswith('#')]


def editable_dependencies():
    """What the two editable installs depend on (setup.cfg's
    install_requires, the tempest plugin's dependencies)."""
    parser = configparser.ConfigParser()
    parser.read(layout.REPO / 'setup.cfg')
    names = requirement_names(
        parser['options']['install_requires'].splitlines())
    with open(layout.REPO / 'contrib' / 'tempest' / 'pyproject.toml',
              'rb') as f:
        names += requirement_names(tomllib.load(f)['project']['dependencies'])
    return names


@pytest.fixture(params=series.available())
def one_series(request):
    return request.param


def test_there_is_a_pinned_set(one_series):
    assert series.pins(one_series)


def test_a_set_pins_what_every_service_installs(one_series):
    assert series.unpinned(one_series, cloud.pypi_packages()) == []
    assert series.unpinned(one_series, editable_dependencies()) == []


def release(version):
    return tuple(int(part) for part in version.split('.'))


COMPARE = {'==': lambda a, b: a == b, '<': lambda a, b: a < b,
           '<=': lambda a, b: a <= b, '>': lambda a, b: a > b,
           '>=': lambda a, b: a >= b, '!=': lambda a, b: a != b}


def test_a_set_holds_the_releases_its_header_names(one_series):
    """Each release named (nova==34.0.0) is the one pinned, each bound
    (oslo.policy<5.1) holds."""
    pins = series.pins(one_series)
    for requirement in series.requires(one_series):
        name, op, version = re.match(r'([\w.-]+)\s*(==|<=|>=|!=|<|>)'
                                     r'\s*([\d.]+)$', requirement).groups()
        pinned = pins[series.canonical(name)]
        assert COMPARE[op](release(pinned), release(version)), (
            requirement, pinned)
    assert [r for r in series.requires(one_series)
            if r.startswith('nova==')], 'no nova release named'


def test_the_newest_set_runs_the_nova_tox_pins_first():
    """One Nova release for the gate and CI's newest Nova suite."""
    tox = (layout.REPO / 'tox.ini').read_text()
    newest_tested = re.findall(r'^deps = nova==([0-9.]+)$', tox, re.M)[0]
    assert series.pins(series.newest())['nova'] == newest_tested


@pytest.fixture
def private_sets(tmp_path, monkeypatch):
    sets = tmp_path / 'constraints'
    sets.mkdir()
    monkeypatch.setattr(series, 'CONSTRAINTS', sets)
    monkeypatch.setattr(layout, 'STATE', tmp_path / 'state')
    monkeypatch.setattr(layout, 'REPO', tmp_path)
    return sets


def test_series_sort_by_release(private_sets):
    for name in ('2026.2', '2027.1', '2026.1'):
        (private_sets / ('%s.txt' % name)).write_text('nova==1\n')
    assert series.available() == ['2026.1', '2026.2', '2027.1']
    assert series.newest() == '2027.1'


def test_a_line_that_pins_nothing_is_refused(private_sets):
    (private_sets / '2026.2.txt').write_text('# requires: nova==1\n'
                                             'nova>=1\n')
    with pytest.raises(processes.GateError, match='not name==version'):
        series.pins('2026.2')


def test_a_set_missing_a_package_installs_nothing(private_sets):
    (private_sets / '2026.2.txt').write_text(
        '# requires: nova==34.0.0\nnova==34.0.0\nPyMySQL==1.2.4\n')
    with pytest.raises(processes.GateError) as exc:
        series.ensure_venv('2026.2', ['nova', 'pymysql', 'keystone'],
                           lambda msg: None)
    assert 'pins no version of keystone;' in str(exc.value)
    assert 'python3 -m gate_cloud pin 2026.2' in str(exc.value)
    assert not series.venv('2026.2').exists()


def test_the_cloud_installs_the_product_with_its_command_line():
    """The reporters and the operator commands the gate runs need the
    ``[cli]`` extra; without it the cloud works only while some pinned
    client happens to bring cliff and openstacksdk along."""
    args = series._editables()
    product = args[args.index('-e') + 1]
    assert product == str(layout.REPO) + '[cli]'
    extras = configparser.ConfigParser()
    extras.read(layout.REPO / 'setup.cfg')
    assert 'cli' in extras['options.extras_require']


def two_sets(sets):
    for name in ('2026.1', '2026.2'):
        (sets / ('%s.txt' % name)).write_text('nova==1\n')
