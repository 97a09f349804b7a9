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

"""The latency plot: median ms against fleet size, one line per variant."""

LABELS = {
    'root_required/limit': 'filter, root_required (default)',
    'required/limit': 'filter, required',
    'scheduler_side/limit': 'scheduler-side filtering',
}
STYLES = {'postgresql': '-', 'sqlite': ':'}


def write(results, path):
    """A PNG at ``path`` from the run's JSON document."""
    import matplotlib
    matplotlib.use('Agg')  # no display here, ever
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(8, 5), dpi=100)
    for backend, runs in sorted(results['backends'].items()):
        sizes = sorted(runs, key=int)
        for key, label in LABELS.items():
            axes.plot([int(s) for s in sizes],
                      [runs[s]['latency'][key]['median_ms'] for s in sizes],
                      STYLES.get(backend, '--'), marker='o',
                      label='%s (%s)' % (label, backend))
        if all('patched' in runs[s]['latency'] for s in sizes):
            axes.plot([int(s) for s in sizes],
                      [runs[s]['latency']['patched']['root_required/limit']
                       ['median_ms'] for s in sizes],
                      STYLES.get(backend, '--'), marker='x',
                      label='%s, patched Placement (%s)' % (
                          LABELS['root_required/limit'], backend))
    axes.set_xlabel('compute hosts (providers)')
    axes.set_ylabel('GET /allocation_candidates, median ms')
    axes.set_title('vmdk boot, limit=%d (Nova default); 20%% of %s hosts '
                   'fit' % (results['limit'], results.get('shape', 'flat')))
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)
    return path
