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

"""``upgrade``: a grenade-style job of its own, apart from ``run``.

The cloud comes up on the series pinned before the one under test, with
the filters and the reporters on; it is upgraded to the newer series
with boots running (``upgrade.py``); the filters are rolled back
(``rollback.py``); the reporters are removed (``reporter_removal.py``);
then down, whatever happened. Each phase's figures go to
``.cloud/upgrade.json`` and into one table (``phase_figures``). A phase
that fails stops the ones after it: each needs the cloud the one before
left. Non-zero exit if anything failed.

Apart from ``run`` so that a failed upgrade never hides what the tempest
suites say of the filters (and the reverse), and so that each job's
time is measured on its own.
"""

import json
import time
import traceback

from gate_cloud import cloud as cloud_mod
from gate_cloud import content
from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import phase_figures
from gate_cloud import reporter_removal
from gate_cloud import rollback
from gate_cloud import series as series_mod
from gate_cloud import upgrade
from gate_cloud.processes import GateError

#: Where the job's figures go (under the cloud's state directory).
RESULTS = 'upgrade.json'


def start_series(series=None, upgrade_from=None):
    """(the series the cloud comes up on, the one it is upgraded to):
    ``series`` defaults to the newest pinned, ``upgrade_from`` to the one
    pinned before it. Refused (GateError) if there is none before or
    either is unknown."""
    target = series or series_mod.newest()
    source = upgrade_from or series_mod.previous(target)
    if source is None:
        raise GateError('no series is pinned before %s: nothing to upgrade '
                        'from' % target)
    series_mod.constraints_file(source)  # refused if unknown
    if series_mod.available().index(source) >= \
            series_mod.available().index(target):
        raise GateError('%s is not older than %s' % (source, target))
    return source, target


def phase(name, module, results, failures, *args):
    """One phase module's run(*args): its figures in ``results``, its
    verdict in ``failures``; False if it failed."""
    try:
        figures = module.run(*args)
    except GateError as exc:
        figures = {'error': str(exc)}
    results[name] = figures
    said = module.verdict(figures)
    failures.extend('%s: %s' % (name, one) for one in said)
    return not said


def run(series=None, upgrade_from=None):
    started = time.monotonic()
    failures, results = [], {}
    source, target = start_series(series, upgrade_from)
    cloud = cloud_mod.up(source)
    results['up'] = {'seconds': round(time.monotonic() - started),
                     'series': source}
    try:
        ctx = cloud_mod.current()
        if phase('upgrade', upgrade, results, failures, ctx, cloud,
                 target):
            cloud = content.load()
            if phase('rollback', rollback, results, failures, ctx, cloud):
                phase('reporter-removal', reporter_removal, results,
                      failures, ctx, cloud)
    except Exception as exc:
        traceback.print_exc()
        failures.append('%s: %s' % (type(exc).__name__, exc))
    finally:
        cloud_mod.down()
    results['failures'] = failures
    results['seconds'] = round(time.monotonic() - started)
    inifile.write(layout.path(RESULTS), json.dumps(results, indent=2),
                  mode=0o644)
    print('== phases (%s) ==\n%s' % (layout.path(RESULTS),
                                      phase_figures.table(results)))
    print('upgrade job took %d s (cloud up on %s: %d s)' % (
        results['seconds'], source, results['up']['seconds']))
    if failures:
        print('gate_cloud upgrade: FAILED: %s' % '; '.join(failures))
        return 1
    print('gate_cloud upgrade: passed')
    return 0
