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

"""The run's figures: the JSON, the verdict on the goal, the plot.

The goal: this project's filters with README's configuration
(mode ``project``) at most ``GOAL`` times Nova's own image-type prefilter
(mode ``nova``) at p99 of nova-scheduler's time per request, in one run.
The rest is reported as measured: each mode against ``off``, and the
share of the scheduler's time Placement's ``root_required`` takes,
``project`` against ``project-patched`` (the same request; the only
difference is the patched Placement).
"""

import json

from benchmarks.fleet import modes

GOAL = 1.05


def ratios(by_mode):
    """The comparisons the docs page gives, from the modes' figures."""
    def p(mode, key, pct='p99'):
        return (by_mode.get(mode) or {}).get(key, {}).get(pct)

    out = {}
    for pct in ('p50', 'p90', 'p99'):
        ours = p('project', 'scheduler_ms', pct)
        nova = p('nova', 'scheduler_ms', pct)
        off = p('off', 'scheduler_ms', pct)
        if ours and nova:
            out['project_over_nova_%s' % pct] = round(ours / nova, 3)
        if ours and off:
            out['project_over_off_%s' % pct] = round(ours / off, 3)
        if nova and off:
            out['nova_over_off_%s' % pct] = round(nova / off, 3)
    stock = p('project', 'placement_candidates_ms', 'p50')
    patched = p('project-patched', 'placement_candidates_ms', 'p50')
    sched = p('project', 'scheduler_ms', 'p50')
    if stock and patched and sched:
        out['root_required_ms_p50'] = round(stock - patched, 1)
        out['root_required_share_of_scheduler_p50'] = round(
            (stock - patched) / sched, 3)
        out['candidates_stock_over_patched_p50'] = round(stock / patched, 3)
    goal = out.get('project_over_nova_p99')
    out['goal'] = GOAL
    out['goal_met'] = None if goal is None else goal <= GOAL
    return out


def ours_wrong(by_mode):
    """{mode: {problem: servers}} of this project's modes that left a
    server in ERROR or where it cannot run: each must leave none (Nova's
    default and Nova's own prefilters are measured as they are)."""
    return {m: {p: n for p, n in f['verdict'].items() if n}
            for m, f in by_mode.items()
            if modes.BY_NAME[m].ours and any(f['verdict'].values())}


def table(by_mode):
    """The lines the command prints."""
    head = ('mode', 'sched p50', 'p90', 'p99', 'cand p50', 'p99',
            'ACTIVE p50 s', 'boots/min', 'CPU ms/boot', 'RSS MiB', 'wrong')
    rows = [head]
    for name, f in by_mode.items():
        s, c, a = (f['scheduler_ms'], f['placement_candidates_ms'],
                   f['api_to_active_s'])
        rows.append((name, s.get('p50'), s.get('p90'), s.get('p99'),
                     c.get('p50'), c.get('p99'), a.get('p50'),
                     f['boots_per_min'], f['scheduler_cpu_ms_per_boot'],
                     f['scheduler_rss_mib_peak'],
                     sum(f['verdict'].values())))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    return ['  '.join(str(v).rjust(w) for v, w in zip(r, widths, strict=True))
            for r in rows]


def write(path, document):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1) + '\n')


def plot(document, path):
    """One picture an operator reads at a glance: per mode, the
    scheduler's p50/p90/p99 per request and Placement's candidate time,
    and the wrongly placed servers. Needs matplotlib (the bench extra)."""
    import matplotlib
    matplotlib.use('Agg')  # no display here, ever
    from matplotlib import pyplot

    by_mode = document['modes']
    names = [m.name for m in modes.MODES if m.name in by_mode]
    fig, (left, right) = pyplot.subplots(
        1, 2, figsize=(11, 4.2), gridspec_kw={'width_ratios': [3, 1.3]})
    width = 0.2
    for i, (pct, colour) in enumerate((('p50', '#9ecae1'),
                                       ('p90', '#4292c6'),
                                       ('p99', '#08519c'))):
        left.bar([x + (i - 1.5) * width for x in range(len(names))],
                 [by_mode[n]['scheduler_ms'].get(pct, 0) for n in names],
                 width, label='nova-scheduler %s' % pct, color=colour)
    left.bar([x + 1.5 * width for x in range(len(names))],
             [by_mode[n]['placement_candidates_ms'].get('p50', 0)
              for n in names], width, label='Placement candidates p50',
             color='#fd8d3c')
    left.set_xticks(range(len(names)), names)
    left.set_ylabel('ms per boot request')
    left.set_title('%d nodes, %d boots per mode, %d at a time' % (
        document['nodes'], document['boots'], document['concurrency']))
    left.legend(fontsize=8)
    wrong_counts = [sum(by_mode[n]['verdict'].values()) for n in names]
    right.bar(range(len(names)), wrong_counts, color='#cb181d')
    right.set_xticks(range(len(names)), names, rotation=30, ha='right')
    right.set_title('servers in ERROR or misplaced')
    for x, v in enumerate(wrong_counts):
        right.annotate(str(v), (x, v), ha='center', va='bottom')
    right.set_ylim(0, max(wrong_counts + [1]) * 1.15)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot.close(fig)
