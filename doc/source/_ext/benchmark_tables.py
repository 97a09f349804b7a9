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

"""``.. benchmark-table:: NAME``: benchmark figures rendered from the JSON
the benchmark wrote, never typed by hand.

Each figure a documentation page gives comes from one run's JSON under
``benchmarks/figures/`` (written by ``python -m benchmarks.scale``), read
when the docs are built; the table names its source file. ``TABLES`` maps
each table's name to its renderer, which returns the caption, the header
and the rows (``rows(name)`` gives them to tests as well).
"""

import json
import math
import os

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
FIGURES = os.path.join(REPO, 'benchmarks', 'figures')
SCALE = 'scale-2026-11-22.json'
PATCH_10K_FLAT = 'scale-patched-2026-11-23-pg-10k-flat.json'
RARE = 'image-metadata-2026-11-23.json'
#: ``python3 -m benchmarks.fleet run``'s JSON (its plot beside it).
FLEET = 'fleet-2026-12-07.json'
#: Its modes in the order the run makes them (benchmarks/fleet/modes.py).
FLEET_MODES = ('off', 'nova', 'project', 'project-all', 'project-patched')


def load(name):
    with open(os.path.join(FIGURES, name)) as f:
        return json.load(f)


def whole(figure):
    """Rounded half up, as the report's tables round (828.5 is 829)."""
    return int(math.floor(figure + 0.5))


def ms(figure):
    return '%d ms' % whole(figure['median_ms'])


def ms_min(figure):
    return '%d (%d) ms' % (whole(figure['median_ms']),
                           whole(figure['min_ms']))


def times(ratio):
    return '%.2f×' % ratio


def _run(data, hosts):
    return ('%s hosts, PostgreSQL with %d API workers, ``limit=%d``; %d '
            'cores, openstack-placement %s' % (
                format(hosts, ','), data['workers'], data['limit'],
                data['machine']['cpus'],
                data['versions']['openstack-placement']))


def scale_10k():
    """The scale benchmark's headline: 10,000 hosts on PostgreSQL."""
    data = load(SCALE)
    run = data['backends']['postgresql']['10000']
    first, again = run['storm_first_start'], run['storm_restart']
    latency, ratios = run['latency'], run['latency']['ratios']
    rare = run['max_placement_results']
    asks = 2 * rare['asks']  # Placement's default order, and randomized

    def false_nvh(variant):
        return sum(rare['%s/%s' % (order, variant)]['false_no_valid_host']
                   for order in ('default_order', 'randomized'))

    boots = {(t['schedulers'], t['variant']): t['boots_per_second']
             for t in run['throughput']}
    rows = [
        ('start-up storm: all %s reporters start at once'
         % format(first['nodes'], ','),
         'in sync in %d s; %.2f requests per node; %d errors, %d 409s, %d '
         'traits lost' % (whole(first['seconds_until_all_in_sync']),
                          first['requests_per_node'], first['errors'],
                          first['conflicts_409'],
                          first['image_traits_lost']
                          + first['others_traits_lost'])),
        ('restart storm (traits already in sync)',
         '%d s; %.2f requests per node' % (
             whole(again['seconds_until_all_in_sync']),
             again['requests_per_node'])),
        ('vmdk boot, the query nova-scheduler sends with the filter on '
         '(the trait in ``root_required``)',
         ms(latency['root_required/limit'])),
        ('the same boot with the filter off, the hosts filtered in the '
         'scheduler', ms(latency['scheduler_side/limit'])),
        ('nova-scheduler with the filter on, against off',
         '%s as fast' % times(ratios['scheduler_side_over_default_limit'])),
        ('the trait in the unsuffixed ``required`` instead, for '
         'comparison (nova-scheduler never sends this form)',
         '%s; %s as fast as the filter off' % (
             ms(latency['required/limit']),
             times(ratios['scheduler_side_over_required_limit']))),
        ('false "No valid host" for a format %s%% of hosts boot, '
         'under the limit' % ('%g' % (100.0 * rare['rare_hosts']
                                      / rare['hosts'])),
         'filter on: %d of %d; filter off: %d of %d measured, %.2f%% per '
         'boot expected' % (false_nvh('root_required'), asks,
                            false_nvh('scheduler_side'), asks,
                            rare['expected_rate_pct_if_random'])),
        ('boots per second, 1 / 4 schedulers, filter on / off',
         '%.2f / %.2f; %.2f / %.2f' % (
             boots[1, 'with_filter'], boots[1, 'without_filter'],
             boots[4, 'with_filter'], boots[4, 'without_filter'])),
        ('this project\'s client, over a bare request',
         '%.1f%%' % ratios['client_overhead_pct']),
    ]
    return ('%s (``benchmarks/figures/%s``)' % (_run(data, 10000), SCALE),
            ('measurement', 'result'), rows)


def placement_patch_10k_flat():
    """Stock and patched Placement side by side, one run."""
    data = load(PATCH_10K_FLAT)
    stock = data['backends']['postgresql']['10000']['latency']
    patched = stock['patched']
    rows = [
        ('filter, ``root_required`` (what nova-scheduler sends)',
         ms_min(stock['root_required/limit']),
         ms_min(patched['root_required/limit'])),
        ('filter, ``required`` (this project\'s client only)',
         ms_min(stock['required/limit']),
         ms_min(patched['required/limit'])),
        ('filter off, hosts filtered in the scheduler',
         ms_min(stock['scheduler_side/limit']),
         ms_min(patched['scheduler_side/limit'])),
        ('filter off ÷ ``root_required``',
         times(stock['ratios']['scheduler_side_over_default_limit']),
         times(patched['ratios']['scheduler_side_over_default_limit'])),
        ('``root_required`` ÷ ``required``',
         times(stock['ratios']['root_required_over_required_limit']),
         times(patched['ratios']['root_required_over_required_limit'])),
    ]
    return ('vmdk boot, median (minimum) of %d, stock and patched Placement '
            'on the same database, %s flat (``benchmarks/figures/%s``)' % (
                data['runs'], _run(data, 10000), PATCH_10K_FLAT),
            ('', 'stock Placement', 'patched'), rows)


def rare_architectures():
    """ImagePropertiesFilter alone against the image-metadata prefilter,
    for the rare architectures of one fleet."""
    data = load(RARE)

    def missed(counts):
        return '%d of %d' % (counts['no_valid_host'], counts['asks'])

    rows = []
    for arch, found in sorted(data['no_valid_host'].items(),
                              key=lambda item: -item[1]['hosts']):
        rows.append((
            '%s (%d hosts, %g%%)' % (arch, found['hosts'],
                                     100.0 * found['hosts'] / data['hosts']),
            '%s / %s' % (
                missed(found['default_order/image_properties_filter']),
                missed(found['randomized/image_properties_filter'])),
            '%s / %s' % (missed(found['default_order/prefilter']),
                         missed(found['randomized/prefilter']))))
    return ('"No valid host" although hosts fit, %s hosts on %s, '
            '``limit=%d``; Placement\'s default candidate order / '
            'randomized; the prefilter costs %.1f µs per request '
            '(``benchmarks/figures/%s``)' % (
                format(data['hosts'], ','),
                'PostgreSQL' if data['backend'] == 'postgresql'
                else data['backend'], data['limit'], data['filter_call_us'],
                RARE),
            ('image architecture', 'ImagePropertiesFilter alone',
             'with the prefilter'), rows)


def _fleet_caption(data, what):
    machine = data.get('machine') or data['machine_at_start']
    return ('%s; %s nodes, %d boots per mode, %d at a time; %d cores '
            '(%s), %.0f GiB, 1-minute load average %.1f '
            '(``benchmarks/figures/%s``)' % (
                what, format(data['nodes'], ','), data['boots'],
                data['concurrency'], machine['cores'], machine['cpu'],
                machine['memory_gib'], machine['load_average'][0], FLEET))


def _pcts(figures, keys=('p50', 'p90', 'p99')):
    return ' / '.join('%d' % whole(figures[k]) for k in keys)


def fleet_modes():
    """nova-scheduler per request, Placement, boots and the wrong
    servers, per scheduling mode of one fleet run."""
    data = load(FLEET)
    rows = []
    for name in (n for n in FLEET_MODES if n in data['modes']):
        mode = data['modes'][name]
        wrong = mode['verdict']
        rows.append((
            '``%s``' % name,
            _pcts(mode['scheduler_ms']) + ' ms',
            _pcts(mode['placement_candidates_ms'], ('p50', 'p99')) + ' ms',
            '%.1f s' % mode['api_to_active_s']['p50'],
            '%.1f' % mode['boots_per_min'],
            '%d ms, %.0f MiB' % (whole(mode['scheduler_cpu_ms_per_boot']),
                                 mode['scheduler_rss_mib_peak']),
            ' / '.join(str(wrong[k]) for k in (
                'error', 'cannot boot the format',
                'cannot boot the architecture',
                'reserved host, image without the tag'))))
    return (_fleet_caption(data, 'Each mode on the same cloud, in order'),
            ('mode', 'nova-scheduler per request p50 / p90 / p99',
             'Placement candidates p50 / p99', 'API-to-ACTIVE p50',
             'boots per minute', 'scheduler CPU per boot, peak RSS',
             'ERROR / wrong format / wrong architecture / reserved'), rows)


def fleet_ratios():
    """The goal and the comparisons of one fleet run."""
    data = load(FLEET)
    ratios = data['ratios']
    rows = [('``project`` / ``nova``, p99 (goal: at most %.2f×)'
             % ratios['goal'], times(ratios['project_over_nova_p99'])),
            ('``project`` / ``nova``, p50', times(
                ratios['project_over_nova_p50'])),
            ('``project`` / ``off``, p50 / p99', '%s / %s' % (
                times(ratios['project_over_off_p50']),
                times(ratios['project_over_off_p99']))),
            ('``nova`` / ``off``, p50 / p99', '%s / %s' % (
                times(ratios['nova_over_off_p50']),
                times(ratios['nova_over_off_p99'])))]
    if 'root_required_ms_p50' in ratios:
        rows.append((
            '``root_required`` in Placement (``project`` stock minus '
            'patched, candidates p50)', '%d ms, %.0f%% of the scheduler\'s '
            'p50' % (whole(ratios['root_required_ms_p50']),
                     100 * ratios['root_required_share_of_scheduler_p50'])))
    return (_fleet_caption(data, 'nova-scheduler\'s time per request, '
                           'ratios of the same percentile'),
            ('comparison', 'measured'), rows)


def fleet_reporters():
    """The reporters at fleet size."""
    data = load(FLEET)
    rep = data['reporters']
    rows = [
        ('start-up, all at once', '%.2f requests per node (%d in all), '
         'in sync in %d s' % (rep['startup_requests_per_node'],
                              rep['startup_requests'],
                              whole(rep['startup_s']))),
        ('idle', '%.2f requests per node per hour (interval %d s)' % (
            rep['idle_requests_per_node_per_hour'], rep['interval_s'])),
        ('after a Placement restart', '%.2f requests per node in %d s' % (
            rep['after_restart_requests_per_node'], rep['window_s'])),
        ('traits lost', '%d' % rep['traits_lost'])]
    return (_fleet_caption(data, '%d reporters, Placement\'s requests for '
                           'their user' % rep['reporters']),
            ('', 'measured'), rows)


TABLES = {
    'fleet-modes': fleet_modes,
    'fleet-ratios': fleet_ratios,
    'fleet-reporters': fleet_reporters,
    'scale-10k': scale_10k,
    'placement-patch-10k-flat': placement_patch_10k_flat,
    'rare-architectures': rare_architectures,
}


def rows(name):
    """(caption, header, rows) of the table ``name``."""
    return TABLES[name]()


class BenchmarkTable(Directive):
    required_arguments = 1

    def run(self):
        name = self.arguments[0]
        if name not in TABLES:
            raise self.error('no benchmark table %r (known: %s)'
                             % (name, ', '.join(sorted(TABLES))))
        caption, header, body = rows(name)
        lines = ['.. list-table:: %s' % caption, '   :header-rows: 1', '']
        for row in (header,) + tuple(body):
            lines.append(('   * - %s' % row[0]).rstrip())
            lines += [('     - %s' % cell).rstrip() for cell in row[1:]]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=name), 0, container)
        return container.children


def setup(app):
    app.add_directive('benchmark-table', BenchmarkTable)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
