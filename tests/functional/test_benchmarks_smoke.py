"""A tiny run of every benchmark, so they keep working (no speed asserted)."""

import json
import subprocess
import sys


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
    assert reporter['resync_in_sync_by_query'] == 8
    assert reporter['resync_requests'] == 1
    assert reporter['one_read_each_requests'] == 8
    assert 'b/a =' in proc.stdout


def test_scale_benchmark_smoke(tmp_path):
    """Every part of the scale benchmark at a tiny size, on PostgreSQL with
    API workers and on SQLite: it runs, and what it counts is right."""
    out, png = tmp_path / 'scale.json', tmp_path / 'scale.png'
    proc = subprocess.run(
        [sys.executable, '-m', 'benchmarks.scale', '--sizes', '40',
         '--sqlite-sizes', '20', '--workers', '2', '--runs', '1', '--asks',
         '2', '--boots', '4', '--concurrency', '1,2', '--storm-processes',
         '2', '--json', str(out), '--plot', str(png)],
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
