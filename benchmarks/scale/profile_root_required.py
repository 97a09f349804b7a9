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

"""Where Placement spends the time of ``root_required`` (cProfile).

    python -m benchmarks.scale.profile_root_required [--size 5000]

Builds the benchmark fleet on PostgreSQL (served by gunicorn workers), then
loads Placement's WSGI app in this process against the same database and
profiles one vmdk query per trait parameter: the share of the time spent
building provider summaries (traits, inventories, usages) for every root
with capacity, which ``root_required`` does before it drops the roots
without the trait, and the unsuffixed ``required`` does only for the roots
that have it.
"""

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from wsgiref import util as wsgi_util

from benchmarks.scale import __main__ as scale
from benchmarks.scale import build
from benchmarks.scale import queries
from benchmarks.scale import storm
from placement_runner import server as embedded_server

#: Placement functions whose cumulative time is the summaries' cost.
SUMMARY_FUNCTIONS = ('_build_provider_summaries',
                     'get_traits_by_provider_tree')


def _hosts(body):
    return sorted(rp for req in body['allocation_requests']
                  for rp in req['allocations'])


def in_process_app(database_url, workdir):
    with open(os.path.join(workdir, embedded_server.CONF_NAME), 'w') as f:
        f.write(embedded_server.placement_conf(database_url, False))
    os.environ['OS_PLACEMENT_CONFIG_DIR'] = workdir
    from placement.wsgi import api
    return api.application


def call(app, query_string, microversion):
    environ = {'PATH_INFO': '/allocation_candidates',
               'QUERY_STRING': query_string, 'REQUEST_METHOD': 'GET',
               'HTTP_X_AUTH_TOKEN': 'admin', 'HTTP_ACCEPT': 'application/json',
               'HTTP_OPENSTACK_API_VERSION': 'placement %s' % microversion}
    wsgi_util.setup_testing_defaults(environ)
    status = []
    body = b''.join(app(environ, lambda s, h, e=None: status.append(s)))
    if not status[0].startswith('200'):
        raise RuntimeError('%s: %s' % (status[0], body[:300]))
    return body


def profile(app, query_string, microversion, runs):
    call(app, query_string, microversion)  # warm up
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    for _ in range(runs):
        call(app, query_string, microversion)
    profiler.disable()
    total = (time.perf_counter() - start) / runs
    stats = pstats.Stats(profiler, stream=io.StringIO())
    spent = {}
    for (_, _, name), (_, _, _, cumulative, _) in stats.stats.items():
        if name in SUMMARY_FUNCTIONS:
            spent[name] = spent.get(name, 0.0) + cumulative / runs
    summaries = spent.get('_build_provider_summaries', 0.0) + spent.get(
        'get_traits_by_provider_tree', 0.0)
    return {'ms_per_query_profiled': round(total * 1000, 1),
            'summaries_ms': round(summaries * 1000, 1),
            'summaries_share_pct': round(100 * summaries / total, 1)}


@contextlib.contextmanager
def roots_filtered_first():
    """An experiment, not a fix we ship: Placement with the roots that lack
    the ``root_required`` traits dropped *before* their summaries are
    built, instead of after. Valid for fleets without sharing providers
    (a sharing provider is its own root but serves other anchors), which
    is what the benchmark fleet is."""
    from placement.objects import allocation_candidate as ac

    original = ac._alloc_candidates_single_provider

    def filtered_first(rg_ctx, rw_ctx, rp_tuples):
        return original(rg_ctx, rw_ctx, [
            t for t in rp_tuples if rw_ctx.in_filtered_anchors(t[1])])

    ac._alloc_candidates_single_provider = filtered_first
    try:
        yield
    finally:
        ac._alloc_candidates_single_provider = original


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m benchmarks.scale.'
                                     'profile_root_required')
    parser.add_argument('--size', type=int, default=5000)
    parser.add_argument('--runs', type=int, default=3)
    args = parser.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix='bench-profile-')
    result = {'size': args.size}
    try:
        with scale.fresh_placement('postgresql', 4) as (placement, url):
            nodes, _ = build.build(placement, args.size)
            storm.storm(placement, nodes)
            app = in_process_app(url, workdir)
            for variant in queries.VARIANTS:
                qs = queries.query_string('vmdk', variant)
                result[variant] = profile(app, qs, placement.microversion,
                                          args.runs)
            qs = queries.query_string('vmdk', 'root_required')
            plain = json.loads(call(app, qs, placement.microversion))
            with roots_filtered_first():
                result['root_required_roots_filtered_first'] = profile(
                    app, qs, placement.microversion, args.runs)
                patched = json.loads(call(app, qs, placement.microversion))
            result['roots_filtered_first_same_answer'] = (
                _hosts(plain) == _hosts(patched))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == '__main__':
    sys.exit(main())
