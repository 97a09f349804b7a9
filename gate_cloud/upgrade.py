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

"""The upgrade phase: the cloud moves to the next series with boots running.

What grenade does, in the order Nova's upgrade guide gives (Placement
before any Nova service, ``nova-status upgrade check``, the schemas, then
nova-conductor, nova-scheduler and nova-api, the compute nodes last with
``[upgrade_levels] compute = auto``, ``online_data_migrations`` at the
end), and Keystone, Placement and Glance each as its own guide says (one
node each: stop, sync the schema with the new release's manage command,
start). ``STEPS`` is that order; ``doc/source/install/upgrade.rst`` lists
the same titles (a test holds them equal).

Every service of ``cloud.SERVICES`` says where it moves (``UPGRADE`` in
its module): ``kept`` (Debian's, not part of a series), ``before-nova``
(a service Nova calls: moved first, in the list's order), ``nova``
(Nova's control services, in ``NOVA_ORDER``), ``per-compute`` (moves
with each compute node, one node at a time) or ``whole-compute`` (a
compute node that is a service of its own, the ironic nova-compute with
its reporter: moved whole, after the others). A service that says nothing
stops the phase before anything moves.

Throughout, a stream of boots runs (``boot_stream``): each format some
host boots must land where it can boot, the reserved image on the
reserved host, and a vmdk boot must end in ERROR naming vmdk. Probe boots
of each kind run before, in the window where the new scheduler works
beside the old computes, and after; every provider's traits are read
after each step and none may be lost.
"""

import contextlib
import os
import signal
import time

from gate_cloud import boot_cases
from gate_cloud import boot_stream
from gate_cloud import cloud as cloud_mod
from gate_cloud import content
from gate_cloud import context
from gate_cloud import devstack_faults
from gate_cloud import faults
from gate_cloud import layout
from gate_cloud import logfiles
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud import series as series_mod
from gate_cloud.processes import GateError
from gate_cloud.services import nova
from gate_cloud.services import nova_api
from gate_cloud.services import nova_scheduler

KEPT = 'kept'
BEFORE_NOVA = 'before-nova'
NOVA = 'nova'
PER_COMPUTE = 'per-compute'
WHOLE_COMPUTE = 'whole-compute'
STAGES = (KEPT, BEFORE_NOVA, NOVA, PER_COMPUTE, WHOLE_COMPUTE)
#: Nova's guide: "It is safest to start nova-conductor first and nova-api
#: last".
NOVA_ORDER = ('nova-conductor', 'nova-scheduler', 'nova-api')
#: The Nova release whose scheduler requires OWNER_NOVA once every
#: nova-compute reports service version 73
#: (nova/scheduler/request_filter.py, owner_nova_filter).
OWNER_NOVA_RELEASE = 34
OWNER_NOVA = 'OWNER_NOVA'
#: nova-scheduler's warning while some nova-compute is older.
OWNER_NOVA_OFF = 'OWNER_NOVA trait not added to scheduling request'
#: How long a restarted reporter has to finish a cycle with nothing
#: failed.
REPORTER_SYNC_DEADLINE = 120.0
#: How long a SIGHUP'ed service has to replace its workers.
WORKERS_DEADLINE = 60.0
#: How long every nova-compute may take to report in again after
#: nova-conductor's workers changed: a report whose call the old worker
#: took is lost, and its compute waits out oslo.messaging's
#: rpc_response_timeout (60 s) and Nova's report_interval (10 s) before
#: the next; meanwhile its service goes down (service_down_time, 60 s)
#: and ComputeFilter refuses it ("There are not enough hosts available").
REPORT_AGAIN_DEADLINE = 120.0


def stage_of(svc):
    stage = getattr(svc, 'UPGRADE', None)
    if stage not in STAGES:
        raise GateError('service %s says nowhere where it moves in an '
                        'upgrade (UPGRADE in its module: one of %s)'
                        % (svc.NAME, ', '.join(STAGES)))
    return stage


def services_in(services, stage):
    return [svc for svc in services if stage_of(svc) == stage]


def check_plan(services):
    """Every service placed, Nova's in NOVA_ORDER exactly."""
    nova_services = {svc.NAME for svc in services_in(services, NOVA)}
    if nova_services != set(NOVA_ORDER):
        raise GateError('Nova\'s control services are %s, the upgrade '
                        'order names %s' % (sorted(nova_services),
                                            list(NOVA_ORDER)))


def nova_release(series):
    return int(series_mod.pins(series)['nova'].split('.')[0])


def log(msg):
    print('[upgrade %s] %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


class Upgrade:
    """One upgrade of the running cloud to series ``to``."""

    def __init__(self, ctx, cloud, to):
        self.ctx = ctx
        self.cloud = cloud
        self.to = to
        self.source = ctx.series_of(nova_api.NAME)
        self.windows = boot_stream.Windows()
        self.stream = None
        self.cases = []
        self.before = {}
        self.lost = {}
        self.gained = {}
        self.services_before = {}
        self.status_before = None
        self.checks = {}
        self.owner_switch = (nova_release(self.source) < OWNER_NOVA_RELEASE
                             <= nova_release(to))

    # -- what runs around the steps ---------------------------------------

    def traits_check(self, where):
        """Every provider's traits now against before: a trait lost is
        recorded (and fails the phase at the end)."""
        now = rest.all_traits(self.ctx.admin)
        for provider, traits in self.before.items():
            lost = set(traits) - set(now.get(provider, ()))
            if lost:
                self.lost.setdefault(provider, {})[where] = sorted(lost)
            gained = set(now.get(provider, ())) - set(traits)
            if gained:
                self.gained[provider] = sorted(gained)

    def restart(self, name, hosts=None):
        svc = self.ctx.service(name)
        # An RPC worker takes work from a queue: the stream's boot in
        # flight ends before it stops. An API (it has ports) finishes its
        # requests itself, and refuses new ones while down. A compute node
        # is out of rotation for its whole restart: a boot placed on it
        # while it starts is put in ERROR by its start-up (Nova errors out
        # builds it finds interrupted), so the stream holds until it is up.
        drain = self.stream.drained if not svc.PORTS and self.stream \
            else None
        whole = drain if hosts is not None else None
        label = name if hosts is None else '%s %s' % (name, ','.join(hosts))
        started = time.monotonic()
        with self.windows.restart(name), \
                (whole or contextlib.nullcontext)():
            cloud_mod.restart(self.ctx, name, self.to, hosts=hosts,
                              drain=None if whole else drain)
        if name == 'nova-conductor':
            with (drain or contextlib.nullcontext)():
                self.computes_report_again(time.time())
        log('%s: on %s in %.0f s' % (label, self.to,
                                     time.monotonic() - started))

    def computes_report_again(self, since):
        """Until every nova-compute reported in through nova-conductor's
        new workers (REPORT_AGAIN_DEADLINE says why it may take a
        minute), as an operator waits for ``openstack compute service
        list`` before sending boots again."""
        nova.wait_all_reported(self.ctx, 'nova-compute', since,
                               REPORT_AGAIN_DEADLINE)
        log('every nova-compute reported in again %.0f s later'
            % (time.time() - since))

    def tool(self, program):
        """A program from the new series' virtualenv, and its
        environment."""
        return (series_mod.venv_bin(self.to, program),
                layout.env_for_services(series_mod.venv(self.to)))

    def probe(self, label):
        client = rest.Client('admin', self.ctx.admin.password)
        found = boot_cases.probe(client, self.cases, label)
        self.checks[label] = {case.label: {
            'status': boot.status, 'host': boot.host,
            'queries': len(queries)} for case, boot, queries in found}
        return found

    def check_queries(self, found, owner_nova, label):
        """Each probe's Placement queries carry the filters' traits, and
        OWNER_NOVA only when ``owner_nova``."""
        for case, _, queries in found:
            if case.must_fail:
                continue  # refused before Placement
            if not queries:
                raise GateError('%s: the %s boot made no allocation-'
                                'candidate query Placement logged'
                                % (label, case.label))
            for query in queries:
                traits = boot_cases.root_required(query) | set(
                    query.get('required', []))
                want = ('COMPUTE_IMAGE_TYPE_RAW' if case.label == 'reserved'
                        else 'COMPUTE_IMAGE_TYPE_%s' % case.label.upper())
                if want not in traits:
                    raise GateError('%s: the %s boot\'s query lacks %s: %s'
                                    % (label, case.label, want, query))
                if (OWNER_NOVA in traits) != owner_nova:
                    raise GateError('%s: the %s boot\'s query %s %s: %s' % (
                        label, case.label,
                        'has' if not owner_nova else 'lacks', OWNER_NOVA,
                        query))

    def status(self):
        """``image-type-filter status`` as the scheduler's nova.conf
        reaches Placement: its exit code."""
        program, env = self.tool('image-type-filter')
        code, output = processes.run_for_status(
            'image-type-filter status', [
                program, 'status', '--config-file',
                nova_scheduler.conf_path(), '-f', 'value'], env=env,
            log=layout.path('logs', 'upgrade.log'))
        return code, output

    def service_records(self):
        out = {}
        for binary in ('nova-conductor', 'nova-scheduler', 'nova-compute'):
            found = nova.services(self.ctx.admin, binary)
            out[binary] = sorted((s['host'], s['state']) for s in found)
        return out

    # -- the steps ----------------------------------------------------------

    def before_upgrade(self):
        self.cases = boot_cases.make(self.ctx.admin, self.cloud, 'upgrade')
        self.before = rest.all_traits(self.ctx.admin)
        self.services_before = self.service_records()
        self.status_before = self.status()[0]
        found = self.probe('before')
        self.check_queries(found, owner_nova=not self.owner_switch and
                           nova_release(self.source) >= OWNER_NOVA_RELEASE,
                           label='before')
        self.stream = boot_stream.Stream(self.ctx.admin.password,
                                         self.cases, 'upgrade')
        self.stream.start()

    def install(self):
        series_mod.ensure_venv(self.to, cloud_mod.pypi_packages(), log)

    def services_nova_calls(self):
        for svc in services_in(self.ctx.services, BEFORE_NOVA):
            check = getattr(svc, 'upgrade_check', None)
            if check is not None:
                check(self.ctx, self.to)
            self.restart(svc.NAME)
            self.traits_check('after %s' % svc.NAME)

    def nova_schemas(self):
        program, env = self.tool('nova-manage')
        for args in (('api_db', 'sync'), ('db', 'sync')):
            processes.run('nova-manage %s from %s' % (' '.join(args),
                                                      self.to),
                          [program, '--config-file', nova_api.conf_path()]
                          + list(args), env=env, timeout=900)

    def nova_status(self):
        program, env = self.tool('nova-status')
        code, output = processes.run_for_status(
            'nova-status upgrade check', [
                program, '--config-file', nova_api.conf_path(), 'upgrade',
                'check'], env=env, timeout=600,
            log=layout.path('logs', 'upgrade.log'))
        self.checks['nova-status'] = code
        # 0 success, 1 warnings; 2 a failure, 255 it could not run.
        if code not in (0, 1):
            raise GateError('nova-status upgrade check (%s) exited %d: %s'
                            % (self.to, code, output.strip()[-300:]))

    def nova_service(self, name):
        def step():
            mark = logfiles.size(nova_scheduler.log_file())
            self.restart(name)
            if name == nova_scheduler.NAME:
                self.scheduler_mark = mark
            self.traits_check('after %s' % name)
        return step

    def beside_old_computes(self):
        found = self.probe('beside-old-computes')
        self.check_queries(found, owner_nova=False,
                           label='beside the old computes')
        if self.owner_switch:
            said = logfiles.read_from(nova_scheduler.log_file(),
                              getattr(self, 'scheduler_mark', 0))
            if OWNER_NOVA_OFF not in said:
                raise GateError('nova-scheduler %s beside the old computes '
                                'never said "%s": is the window real?'
                                % (self.to, OWNER_NOVA_OFF))

    def computes(self):
        per_compute = services_in(self.ctx.services, PER_COMPUTE)
        for c in self.cloud['computes']:
            host = c['host']
            for svc in per_compute:
                mark = logfiles.size(c['service_log'])
                self.restart(svc.NAME, hosts=[host])
                if svc.NAME == 'reporters':
                    self.reporter_synced(c, mark)
            self.traits_check('after compute %s' % host)
        for svc in per_compute:
            self.ctx.run_from(svc.NAME, self.to)
        for svc in services_in(self.ctx.services, WHOLE_COMPUTE):
            self.restart(svc.NAME)
            self.traits_check('after %s' % svc.NAME)

    def reporter_synced(self, compute, mark):
        from gate_cloud.services import reporters
        pid = processes.pid_of(reporters.process_name(compute['host']))
        end = time.monotonic() + REPORTER_SYNC_DEADLINE
        while time.monotonic() < end:
            records = faults.log_records(compute['service_log'], pid, mark)
            if devstack_faults.in_sync_again(records):
                return
            time.sleep(1)
        raise GateError('reporter %s on %s finished no cycle with nothing '
                        'failed within %ds; see %s' % (
                            compute['host'], self.to, REPORTER_SYNC_DEADLINE,
                            compute['service_log']))

    def sighup(self):
        """SIGHUP replaces an oslo.service's workers: an RPC call in
        flight to nova-conductor may be lost (a boot's, or a compute's
        status report: that compute then goes down for a minute), so the
        stream holds its boots until the new workers run and every
        nova-compute reported in through them, as an operator takes the
        signal in a quiet moment and waits for the compute services."""
        pids, workers = {}, {}
        with (self.stream.drained if self.stream
              else contextlib.nullcontext)():
            for name in NOVA_ORDER:
                pid = processes.pid_of(name)
                if pid is None:
                    raise GateError('%s is not running' % name)
                workers[name] = processes.children(pid)
                os.kill(pid, signal.SIGHUP)
                pids[name] = pid
            for name, pid in pids.items():
                self.workers_replaced(name, pid, workers[name])
            self.computes_report_again(time.time())
        self.traits_check('after SIGHUP')

    def workers_replaced(self, name, pid, old):
        """Until none of ``old`` runs and ``name`` has workers again."""
        def probe():
            if not processes.alive(pid):
                raise GateError('%s exited after SIGHUP' % name)
            return (not any(processes.running(w) for w in old)
                    and processes.children(pid))
        processes.wait_for('%s replacing its workers after SIGHUP' % name,
                           probe, deadline=WORKERS_DEADLINE,
                           log=nova.log(name))

    def all_upgraded(self):
        found = self.probe('after')
        self.check_queries(found, owner_nova=nova_release(self.to) >=
                           OWNER_NOVA_RELEASE, label='after the upgrade')

    def online_migrations(self):
        program, env = self.tool('nova-manage')
        code, output = processes.run_for_status(
            'nova-manage db online_data_migrations', [
                program, '--config-file', nova_api.conf_path(), 'db',
                'online_data_migrations'], env=env, timeout=900,
            log=layout.path('logs', 'upgrade.log'))
        self.checks['nova online_data_migrations'] = code
        if code != 0:
            raise GateError('nova-manage db online_data_migrations exited '
                            '%d: %s' % (code, output.strip()[-300:]))
        for svc in self.ctx.services:
            migrate = getattr(svc, 'online_data_migrations', None)
            if migrate is not None:
                migrate(self.ctx)

    def after_upgrade(self):
        self.stream.stop()
        self.traits_check('at the end')
        # What no step restarts moves on paper: the Debian services (not
        # part of a series) and the clients the gate runs.
        for svc in services_in(self.ctx.services, KEPT):
            self.ctx.run_from(svc.NAME, self.to)
        self.ctx.run_from(context.CLIENTS, self.to)
        behind = sorted(k for k, v in self.ctx.series.items() if v != self.to)
        if behind:
            raise GateError('still on %s after the upgrade: %s'
                            % (self.source, ', '.join(behind)))
        content.refresh(self.ctx)
        records = self.service_records()
        if records != self.services_before:
            raise GateError('Nova\'s service records changed: %s before, '
                            '%s after' % (self.services_before, records))
        down = [r for binary in records.values() for r in binary
                if r[1] != 'up']
        if down:
            raise GateError('service records down after the upgrade: %s'
                            % down)
        code, output = self.status()
        self.checks['status'] = {'before': self.status_before,
                                 'after': code}
        if code != self.status_before:
            raise GateError('image-type-filter status exited %d before the '
                            'upgrade and %d after: %s' % (
                                self.status_before, code,
                                output.strip()[-300:]))


def steps(services):
    """The upgrade's steps, in order: (title, action, an operator's step:
    in the documented order). ``services``: the cloud's (each of Nova's
    control services is a step of its own)."""
    check_plan(services)
    out = [
        ('Before: boot each format and record every provider\'s traits',
         'before_upgrade', False),
        ('Install the new release beside the old one', 'install', True),
        ('Upgrade the services Nova calls', 'services_nova_calls', True),
        ('Sync Nova\'s database schemas', 'nova_schemas', True),
        ('Run nova-status upgrade check', 'nova_status', True),
    ]
    for name in NOVA_ORDER:
        out.append(('Restart %s on the new release' % name, name, True))
    out += [
        ('Boot each format beside the old compute nodes',
         'beside_old_computes', True),
        ('Upgrade each compute node in turn, its reporter after it',
         'computes', True),
        ('Send SIGHUP to %s' % ', '.join(NOVA_ORDER[:-1]) + ' and '
         + NOVA_ORDER[-1], 'sighup', True),
        ('Boot each format with every compute node upgraded',
         'all_upgraded', True),
        ('Run the online data migrations', 'online_migrations', True),
        ('After: no trait lost, every service record up, status as before',
         'after_upgrade', False),
    ]
    return out


def titles(services, operator_only=False):
    return [title for title, _, operator in steps(services)
            if operator or not operator_only]


def run(ctx, cloud, to):
    """Upgrade the running cloud to series ``to``; returns the phase's
    figures. The first step that fails ends the walk (its error is in the
    figures: ``verdict`` says it, with every wrong boot and lost trait)."""
    started = time.monotonic()
    upgrade = Upgrade(ctx, cloud, to)
    timings = []
    error = None
    log('from %s to %s' % (upgrade.source, to))
    try:
        for n, (title, action, _) in enumerate(steps(ctx.services), 1):
            log('step %d: %s' % (n, title))
            t0 = time.monotonic()
            try:
                if action in NOVA_ORDER:
                    upgrade.nova_service(action)()
                else:
                    getattr(upgrade, action)()
            except GateError as exc:
                error = 'step %d (%s): %s' % (n, title, exc)
                log('FAILED: %s' % error)
                break
            finally:
                timings.append({'step': title, 'seconds': round(
                    time.monotonic() - t0, 1)})
    finally:
        if upgrade.stream is not None and upgrade.stream.is_alive():
            upgrade.stream.stop()
    figures = {
        'error': error,
        'from': upgrade.source, 'to': to,
        'seconds': round(time.monotonic() - started),
        'steps': timings,
        'checks': upgrade.checks,
        'traits_lost': upgrade.lost,
        'traits_gained': upgrade.gained,
    }
    if upgrade.stream is not None:
        figures['stream'] = boot_stream.summary(
            upgrade.cases, upgrade.stream.boots, upgrade.windows)
        figures['restarts'] = [
            {'service': name, 'seconds': round(end - start, 1)}
            for name, start, end in upgrade.windows.spans]
    return figures


def verdict(figures):
    """The phase's failures, each said (empty: it passed)."""
    out = [figures['error']] if figures.get('error') else []
    if figures.get('traits_lost'):
        out.append('traits lost: %s' % figures['traits_lost'])
    stream = figures.get('stream') or {}
    out += stream.get('failures', [])
    return out
