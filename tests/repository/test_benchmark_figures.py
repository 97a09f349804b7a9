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

"""Benchmark figures have one source: the JSON a run wrote under
``benchmarks/figures/``.

The operator pages render their tables from it (the docs' own
``benchmark-table`` directive) and type no figure themselves; the full
report (``benchmarks/README.md``), which quotes the same runs in
Markdown, quotes exactly what the JSON holds. Expected values are read
from the JSON here, not from the renderer."""

import json
import math
import os
import re
import sys

import pytest

from benchmarks.fleet import modes
from benchmarks.fleet import verdict
from tests import helpers

REPO = helpers.REPO
FIGURES = os.path.join(REPO, 'benchmarks', 'figures')
sys.path.insert(0, os.path.join(REPO, 'doc', 'source', '_ext'))
import benchmark_tables  # noqa: E402

#: Operator pages whose figures come from benchmark-table directives only.
RENDERED_PAGES = ('doc/source/admin/scale.rst',
                  'doc/source/admin/placement-patch.rst')
#: A measured figure: milliseconds, microseconds, a ratio with decimals,
#: a count of asks or boots.
FIGURE = re.compile(r'\d[\d,.]* ?(?:ms|µs)\b|\d+\.\d+ ?×|\d+ of \d+'
                    r'|\d+(?:\.\d+)? requests per')


def whole(figure):
    """Half up, as the report rounds (828.5 ms is 829)."""
    return int(math.floor(figure + 0.5))


def load(name):
    with open(os.path.join(FIGURES, name)) as f:
        return json.load(f)


def read(path):
    with open(os.path.join(REPO, path)) as f:
        return f.read()


@pytest.mark.parametrize('page', RENDERED_PAGES)
def test_operator_pages_type_no_figure(page):
    text = read(page)
    assert '.. benchmark-table::' in text
    assert FIGURE.findall(text) == []


def cells(table):
    caption, header, rows = benchmark_tables.rows(table)
    return dict((row[0], row[1:]) for row in rows)


def test_the_scale_table_is_the_json():
    run = load(benchmark_tables.SCALE)['backends']['postgresql']['10000']
    latency = run['latency']
    rendered = ' '.join(' '.join(values) for values in cells(
        'scale-10k').values())
    for variant in ('root_required/limit', 'required/limit',
                    'scheduler_side/limit'):
        assert '%d ms' % whole(latency[variant]['median_ms']) in rendered
    for ratio in ('scheduler_side_over_default_limit',
                  'scheduler_side_over_required_limit'):
        assert '%.2f×' % latency['ratios'][ratio] in rendered
    assert 'in sync in %d s' % whole(
        run['storm_first_start']['seconds_until_all_in_sync']) in rendered
    # nova-scheduler's row is the root_required one, and says so.
    [(label, value)] = [(k, v) for k, v in cells('scale-10k').items()
                        if 'filter on, against off' in k]
    assert value == ('%.2f× as fast' % latency['ratios'][
        'scheduler_side_over_default_limit'],)


def test_the_patch_table_is_the_json():
    stock = load(benchmark_tables.PATCH_10K_FLAT)['backends']['postgresql'][
        '10000']['latency']
    rows = cells('placement-patch-10k-flat')
    first = rows['filter, ``root_required`` (what nova-scheduler sends)']
    assert first == tuple('%d (%d) ms' % (whole(f['median_ms']),
                                          whole(f['min_ms']))
                          for f in (stock['root_required/limit'],
                                    stock['patched']['root_required/limit']))


def markdown_rows(text, first_cells):
    """Rows of Markdown tables whose first cells are ``first_cells``."""
    prefix = '| %s |' % ' | '.join(first_cells)
    return [[cell.strip().strip('*') for cell in line.strip('|').split('|')]
            for line in text.splitlines() if line.startswith(prefix)]


@pytest.mark.parametrize('backend,label', [('postgresql', 'PostgreSQL'),
                                           ('sqlite', 'SQLite')])
def test_the_full_report_quotes_the_scale_json(backend, label):
    report = read('benchmarks/README.md')
    data = load(benchmark_tables.SCALE)['backends'][backend]
    for hosts, run in data.items():
        latency = run['latency']
        # The latency table is the report's first with these first cells.
        row = markdown_rows(report, (label, format(int(hosts), ',')))[0]

        def both(variant, latency=latency):
            return '%d / %d' % (whole(latency[variant + '/limit'][
                'median_ms']), whole(latency[variant + '/all']['median_ms']))

        ratios = latency['ratios']
        assert row[2:5] == [both('root_required'), both('required'),
                            both('scheduler_side')], (hosts, row)
        assert row[5].replace('*', '') == '%.2f× / %.2f×' % (
            ratios['scheduler_side_over_default_limit'],
            ratios['scheduler_side_over_default_all']), (hosts, row)
        assert row[6] == '%.2f×' % ratios[
            'scheduler_side_over_required_limit'], (hosts, row)


def test_the_full_report_quotes_the_patched_json():
    report = read('benchmarks/README.md')
    latency = load(benchmark_tables.PATCH_10K_FLAT)['backends'][
        'postgresql']['10000']['latency']
    row = markdown_rows(report, ('PostgreSQL', 'flat', '10,000'))[0]

    def pair(variant):
        return '%d (%d) / %d (%d)' % (
            whole(latency[variant]['median_ms']),
            whole(latency[variant]['min_ms']),
            whole(latency['patched'][variant]['median_ms']),
            whole(latency['patched'][variant]['min_ms']))

    assert row[3:6] == [pair('root_required/limit'),
                        pair('required/limit'),
                        pair('scheduler_side/limit')]


def test_the_fleet_tables_are_the_json():
    assert benchmark_tables.FLEET_MODES == tuple(m.name for m in modes.MODES)
    data = load(benchmark_tables.FLEET)
    rows = cells('fleet-modes')
    for name, mode in data['modes'].items():
        scheduler = mode['scheduler_ms']
        assert rows['``%s``' % name][0] == '%d / %d / %d ms' % tuple(
            whole(scheduler[p]) for p in ('p50', 'p90', 'p99'))
        assert rows['``%s``' % name][-1] == ' / '.join(
            str(mode['verdict'][p]) for p in verdict.PROBLEMS)
    ratios = cells('fleet-ratios')
    [goal] = [v for k, v in ratios.items() if '(goal' in k]
    assert goal == ('%.2f×' % data['ratios']['project_over_nova_p99'],)
    reporters = cells('fleet-reporters')
    assert reporters['traits lost'] == ('%d' % data['reporters'][
        'traits_lost'],)


def test_the_fleet_page_types_no_figure():
    text = read('doc/source/contributor/fleet-benchmark.rst')
    for table in ('fleet-modes', 'fleet-ratios', 'fleet-reporters'):
        assert '.. benchmark-table:: %s' % table in text
    assert os.path.exists(os.path.join(
        FIGURES, benchmark_tables.FLEET.replace('.json', '.png')))
