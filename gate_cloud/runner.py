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

"""``run``: up, the tempest suites, the phases, faults, figures, down; one
verdict.

Order: the plugin suite and the peer suite with the filters on, the peer
suite with the filters off (nova-scheduler's config switched, restarted:
the same pass count is required), then the phases of ``PHASES`` (each
leaves the cloud as it found it), then the faults, then the figures, then
down, whatever happened. Non-zero exit if anything failed.
``phase(name)`` runs one phase against the cloud ``up --keep`` left.
"""

import json
import pathlib
import time
import traceback

from gate_cloud import boots
from gate_cloud import cloud as cloud_mod
from gate_cloud import content
from gate_cloud import explain
from gate_cloud import faults
from gate_cloud import figures
from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import log_only
from gate_cloud import privilege
from gate_cloud import reserved_ironic
from gate_cloud.processes import GateError
from gate_cloud.services import nova_scheduler

#: The phases after the tempest suites, in order: ``run(cloud, ctx)``
#: each, its record kept in run.json under its name.
PHASES = {
    'ironic': reserved_ironic.run,
    'candidates': explain.run,
    'log-only': log_only.run,
    'privilege': privilege.run,
}


#: What ``run --phase`` also takes: a tempest suite by itself (the plugin's
#: tests on this cloud's four hosts: formats per host, a reserved host,
#: every scheduler worker; what one devstack node skips).
SUITES = {'tempest-plugin': 'plugin'}


def _tempest_run():
    """The tempest helper's module; the run fails without it."""
    try:
        from gate_cloud import tempest_run
    except ImportError as exc:
        raise GateError('gate_cloud.tempest_run is not available (%s)'
                        % exc) from None
    return tempest_run


def _suite(tempest_run, cloud, suite, label, failures, results):
    workspace = layout.path('tempest', label)
    workspace.mkdir(parents=True, exist_ok=True)
    try:
        result = tempest_run.run(cloud, pathlib.Path(workspace), suite)
    except Exception as exc:
        failures.append('tempest %s: %s' % (label, exc))
        return None
    results[label] = result
    print('== tempest %s ==\n%s' % (label, result.get('summary', '')),
          flush=True)
    if result.get('failed') or not result.get('passed'):
        failures.append('tempest %s: %s passed, %s failed' % (
            label, result.get('passed'), result.get('failed')))
    return result


def _phase(name, cloud, ctx, failures, results):
    started = time.monotonic()
    try:
        results[name] = PHASES[name](cloud, ctx)
    except GateError as exc:
        failures.append('%s: %s' % (name, exc))
    except Exception as exc:  # a bug of ours: the other phases still run
        traceback.print_exc()
        failures.append('%s: internal error %s: %s' % (
            name, type(exc).__name__, exc))
    results.setdefault('phase_seconds', {})[name] = round(
        time.monotonic() - started)
    print('== phase %s: %d s ==' % (name, results['phase_seconds'][name]),
          flush=True)


def phase(name):
    """One phase against the running cloud (``up --keep``)."""
    failures, results = [], {}
    _phase(name, content.load(), cloud_mod.current(), failures, results)
    if failures:
        print('gate_cloud phase %s: FAILED: %s' % (name, '; '.join(failures)))
        return 1
    print('gate_cloud phase %s: passed' % name)
    return 0


def _upload_images(admin, cloud):
    images = {}
    for fmt in ('raw', 'qcow2'):
        images[fmt] = boots.upload_image(
            admin, 'gate-%s' % fmt, fmt, cloud['image_files'][fmt])
    return images


def run(series=None, only=None):
    """The whole run; with ``only`` (phase names), up, those phases and
    down: what the devstack job does not run yet."""
    started = time.monotonic()
    failures, results = [], {}
    figs = None
    cloud = cloud_mod.up(series)
    try:
        ctx = cloud_mod.current()
        if only:
            for name in only:
                if name in SUITES:
                    _suite(_tempest_run(), cloud, SUITES[name], SUITES[name],
                           failures, results)
                else:
                    _phase(name, cloud, ctx, failures, results)
        else:
            figs = _everything(cloud, ctx, failures, results)
    except Exception as exc:
        traceback.print_exc()
        failures.append('%s: %s' % (type(exc).__name__, exc))
    finally:
        cloud_mod.down()
    return _finish(results, failures, figs, started)


def _everything(cloud, ctx, failures, results):
    """The tempest suites, the phases, the faults, the figures: the
    figures (or None)."""
    figs = None
    admin = ctx.admin
    try:
        tempest_run = _tempest_run()
    except GateError as exc:
        failures.append(str(exc))
        tempest_run = None
    if tempest_run is not None:
        _suite(tempest_run, cloud, 'plugin', 'plugin', failures, results)
        on = _suite(tempest_run, cloud, 'peer', 'peer-filters-on',
                    failures, results)
        nova_scheduler.set_filters(ctx, False)
        off = _suite(tempest_run, cloud, 'peer', 'peer-filters-off',
                     failures, results)
        nova_scheduler.set_filters(ctx, True)
        if on and off and on.get('passed') != off.get('passed'):
            failures.append('peer suite: %s passed with the filters on, '
                            '%s with them off' % (on.get('passed'),
                                                  off.get('passed')))
    for name in PHASES:
        _phase(name, cloud, ctx, failures, results)
    images = _upload_images(admin, cloud)
    try:
        results['faults'] = faults.run(cloud, ctx, images)
    except GateError as exc:
        failures.append('faults: %s' % exc)
    try:
        figs = figures.run(cloud, ctx, images)
        failures += ['figures: %s' % p for p in figures.problems(figs)]
    except GateError as exc:
        failures.append('figures: %s' % exc)
    return figs


def _finish(results, failures, figs, started):
    results['failures'] = failures
    results['figures'] = figs
    results['seconds'] = round(time.monotonic() - started)
    inifile.write(layout.path('run.json'), json.dumps(results, indent=2),
                   mode=0o644)
    if figs:
        print('== figures (%s) ==\n%s' % (layout.path('figures.json'),
                                          figures.table(figs)))
    for label in ('plugin', 'peer-filters-on', 'peer-filters-off'):
        if label in results:
            r = results[label]
            print('tempest %-17s passed %s failed %s skipped %s' % (
                label, r.get('passed'), r.get('failed'), r.get('skipped')))
    print('gate run took %d s' % results['seconds'])
    if failures:
        print('gate_cloud run: FAILED: %s' % '; '.join(failures))
        return 1
    print('gate_cloud run: passed')
    return 0
