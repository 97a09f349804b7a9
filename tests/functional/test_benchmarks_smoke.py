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
