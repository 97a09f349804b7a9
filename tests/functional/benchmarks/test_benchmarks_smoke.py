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

"""A tiny run of every benchmark, so they keep working (no speed asserted)."""

import json
import shutil
import subprocess
import sys

import pytest

#: Each builds and measures a fleet: CI's slow tier, not README's command.
pytestmark = pytest.mark.slow

def test_benchmarks_smoke(tmp_path):
    out = tmp_path / 'bench.json'
    proc = subprocess.run(
        [sys.executable, '-m', 'benchmarks', '--providers', '10', '--runs',
         '1', '--calls', '50', '--json', str(out)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result['vmware_providers'] == 2
    for key in ('a_prefilter', 'a_required_form', 'b_scheduler_side',
                'c_bare_requests'):
        assert result['prefilter'][key]['correct'] is True
        assert result['prefilter'][key]['hosts'] == 2
    assert result['prefilter']['b_scheduler_side']['bytes'] > \
        result['prefilter']['a_prefilter']['bytes']
    reporter = result['reporter']
    assert reporter['unchanged_provider_requests'] == 1
    assert reporter['changed_provider_requests'] == 2
    # 10 providers, 2 of them VMware-like: the 8 others re-synced, never
    # dearer than reading each once (what one query costs is the
    # reporter's business;
    # tests/functional/virt_capabilities/test_reporter.py holds it).
    assert reporter['resync_providers'] == 8
    assert reporter['one_read_each_requests'] == 8
    assert 1 <= reporter['resync_requests'] <= 8
    assert 0 <= reporter['resync_in_sync_by_query'] <= 8
    assert 'b/a =' in proc.stdout


def test_scale_benchmark_smoke(tmp_path):
    """Every part of the scale benchmark at a tiny size, on PostgreSQL with
    API workers and on SQLite: it runs, and what it counts is right."""
    out, png = tmp_path / 'scale.json', tmp_path / 'scale.png'
    proc = subprocess.run(
        [sys.executable, '-m', 'benchmarks.scale', '--sizes', '40',
         '--sqlite-sizes', '20', '--workers', '2', '--runs', '1', '--asks',
         '2', '--boots', '4', '--concurrency', '1,2', '--storm-processes',
         '2', '--build-processes', '1', '--json', str(out), '--plot',
         str(png)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    for backend, size in (('postgresql', 40), ('sqlite', 20)):
        run = result['backends'][backend][str(size)]
        first, again = run['storm_first_start'], run['storm_restart']
        assert first['nodes'] == size and first['in_sync'], first
        assert first['errors'] == 0 and first['requests_per_node'] == 3.0
        # A restart finds every node in sync: discovery and one read.
        assert again['in_sync'] and again['requests_per_node'] == 2.0
        assert again['server_requests_per_node'] == 2.0
        for key, row in run['latency'].items():
            if 'correct' in row:
                assert row['correct'] is True, key
    pg = result['backends']['postgresql']['40']
    limit = pg['max_placement_results']
    assert limit['rare_hosts'] == 1
    for key in ('default_order/root_required', 'randomized/root_required'):
        assert limit[key]['false_no_valid_host'] == 0
    for row in pg['throughput']:
        assert row['booted'] == 4 and row['errors'] == 0, row
    assert 'postgresql' in proc.stdout and 'JSON:' in proc.stdout


@pytest.fixture(scope='module')
def patched_copy_cache(tmp_path_factory):
    """One cache for the patched Placement copy, built by the first run
    and reused by the next, as a user's cache would be."""
    return str(tmp_path_factory.mktemp('cache'))


#: Each shape on the backends it needs: how a Placement is started per
#: backend is the same code whatever the fleet's shape, so the nested fleet
#: runs on SQLite alone (a PostgreSQL cluster and two gunicorn Placements
#: fewer).
SHAPE_SIZES = {'flat': {'postgresql': 20, 'sqlite': 10},
               'nested': {'sqlite': 10}}


@pytest.mark.skipif(shutil.which('patch') is None,
                    reason='patch(1) is not installed')
@pytest.mark.parametrize('shape', sorted(SHAPE_SIZES))
def test_scale_benchmark_patched_column_smoke(tmp_path, monkeypatch, shape,
                                              patched_copy_cache):
    """The latency step alone, with a patched Placement beside the stock
    one: both answer, every answer is compared, and both find exactly the
    VMware-like hosts."""
    monkeypatch.setenv('XDG_CACHE_HOME', patched_copy_cache)
    sizes = SHAPE_SIZES[shape]
    out = tmp_path / 'scale.json'
    proc = subprocess.run(
        [sys.executable, '-m', 'benchmarks.scale',
         '--sizes', str(sizes.get('postgresql', '')),
         '--sqlite-sizes', str(sizes['sqlite']), '--workers', '2',
         '--runs', '1', '--build-processes', '1',
         '--steps', 'latency', '--shape', shape,
         '--placement-patch', 'root-required-prefilter',
         '--json', str(out), '--plot', str(tmp_path / 'scale.png')],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result['shape'] == shape
    assert result['placement_patch'] == 'root-required-prefilter'
    assert {backend: int(size) for backend, runs in
            result['backends'].items() for size in runs} == sizes
    for backend, size in sizes.items():
        run = result['backends'][backend][str(size)]
        assert 'storm_first_start' not in run
        latency = run['latency']
        assert latency['patched']['patch'] == 'root-required-prefilter'
        answers = latency['answers']
        assert answers['identical'] is True, answers
        for key, check in answers['queries'].items():
            # At least every timed answer of both servers (--runs 1), less
            # the reference; how many warm-ups come first is the
            # benchmark's own business.
            assert check['answers_compared'] >= 2 * 1 - 1, key
            assert check['mismatches'] == 0, key
            assert check['candidates'] == (
                size if key.startswith('scheduler_side') else size // 5)
        for figures in (latency, latency['patched']):
            for variant in ('root_required', 'required', 'scheduler_side'):
                for scope in ('limit', 'all'):
                    row = figures['%s/%s' % (variant, scope)]
                    assert row['correct'] is True, (variant, scope)
                    assert row['hosts'] == size // 5
                    assert row['min_ms'] <= row['median_ms']
            assert 'root_required_over_required_limit' in figures['ratios']
    assert 'identical' in proc.stdout and 'DIFFERENT' not in proc.stdout


def test_scale_benchmark_refuses_what_cannot_work():
    """Bad combinations stop before any fleet is built."""
    for extra, words in (
            (['--steps', 'storm,nothing'], 'nothing'),
            (['--shape', 'nested'], 'throughput'),
            (['--steps', 'storm', '--placement-patch',
              'root-required-prefilter'], 'latency step'),
            (['--steps', 'latency', '--placement-patch', 'no-such-patch'],
             'root-required-prefilter')):
        proc = subprocess.run(
            [sys.executable, '-m', 'benchmarks.scale', '--sizes', '10',
             '--sqlite-sizes', ''] + extra,
            capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, (extra, proc.stderr)
        assert words in proc.stderr, (extra, proc.stderr)
