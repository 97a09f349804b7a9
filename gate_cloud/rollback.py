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

"""The rollback phase: the filters backed out of nova-scheduler, Nova's own
mechanisms first, and the package last.

nova-scheduler first moves to an environment of its own where this
project is installed as a package (a wheel, not the checkout the rest of
the cloud runs from), so that the last step is a real ``pip uninstall``.
Then, as ``doc/source/install/upgrade.rst`` says (a test holds its list
and ``STEPS`` equal):

#. Nova's own mechanisms on beside the filters: ``[scheduler]
   query_placement_for_image_type_support`` (the formats),
   ``enable_isolated_aggregate_filtering`` with an aggregate of the
   reserved hosts carrying ``trait:<reserved>=required`` (the reserved
   hosts), ``image_metadata_prefilter`` (the image-metadata family);
   nova-scheduler restarted.
#. This project's lines out of nova.conf (``available_filters``,
   ``ImageTypeRebuildFilter``, its options); nova-scheduler restarted.
#. The package uninstalled from nova-scheduler's environment;
   nova-scheduler restarted.

After each step nova-scheduler must start and schedule: a qcow2 image
with ``hw_disk_bus=virtio`` lands where it boots (its Placement query
requires both traits), a vmdk boot ends in ERROR, the reserved image
lands on the reserved host, and an untagged boot with every other host
that boots it disabled ends in ERROR: the reserved host stays reserved
even when it is the only one free. Which mechanism did it is read from
the boots' Placement queries: this project's ``!<reserved>`` while its
lines are in, Nova's forbidden aggregate (``member_of=!in:``) from the
first step on.

Last, the reverse order is proven to fail: nova-scheduler started from
the package-less environment with the old nova.conf stops at start-up,
naming the module it cannot import.
"""

import json
import os
import pathlib
import subprocess
import sys
import time

from gate_cloud import boot_cases
from gate_cloud import boots
from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import logfiles
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import nova
from gate_cloud.services import nova_scheduler

#: Nova's own mechanism for each thing the filters do, where Nova has one.
NOVA_MECHANISMS = {'scheduler': {
    # The image's disk_format as a required COMPUTE_IMAGE_TYPE_* trait.
    'query_placement_for_image_type_support': 'True',
    # Aggregates whose metadata requires a trait are forbidden to
    # requests that do not require it.
    'enable_isolated_aggregate_filtering': 'True',
    # hw_disk_bus and the other image properties Nova maps to traits.
    'image_metadata_prefilter': 'True',
}}
#: The aggregate of the reserved hosts, for Nova's isolation.
AGGREGATE = 'gate-reserved'
#: The module nova.conf names in available_filters: what nova-scheduler
#: fails to import when the package goes first.
OUR_MODULE = 'image_type_filter'
#: nova-scheduler's line once the filters are in (integration.install).
LOADED_LINE = 'image-type-filter request filters added to nova-scheduler'
#: The bus the storage_bus check boots with.
DISK_BUS = 'virtio'
#: How long nova-scheduler started the reverse way may take to stop.
REVERSE_DEADLINE = 180.0
#: The reverse-order process (never the cloud's nova-scheduler).
REVERSE = 'nova-scheduler-reverse-order'
STATUS_DISABLED = 'COMPUTE_STATUS_DISABLED'


def env_dir():
    return layout.path('nova-scheduler-env')


def log(msg):
    print('[rollback %s] %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


def scheduler_conf(creds, filters_on, nova_mechanisms):
    """nova-scheduler's nova.conf at a step of the rollback."""
    return nova_scheduler.conf(
        creds, filters_on, extra=NOVA_MECHANISMS if nova_mechanisms else None)


class SchedulerEnv:
    """A virtualenv for nova-scheduler alone: this project installed from
    a wheel into it, Nova and the rest read from the series' virtualenv
    through one ``.pth`` line (kept aside while pip runs, so pip sees and
    touches only this environment)."""

    def __init__(self, series_venv, path=None):
        self.series_venv = pathlib.Path(series_venv)
        self.path = pathlib.Path(path or env_dir())

    def site_packages(self, venv):
        found = sorted(pathlib.Path(venv).glob('lib/python*/site-packages'))
        if not found:
            raise GateError('no site-packages in %s' % venv)
        return found[0]

    @property
    def pth(self):
        return self.site_packages(self.path) / 'gate-series-venv.pth'

    def python(self):
        return str(self.path / 'bin' / 'python')

    def _run(self, what, argv):
        processes.run(what, argv, env=self.env(), timeout=900,
                      log=layout.path('logs', 'rollback.log'))

    def env(self):
        """The scheduler's environment: nothing of the checkout on its
        path (the cloud's other services have it on PYTHONPATH)."""
        env = layout.env_for_services(self.path)
        env.pop('PYTHONPATH', None)
        return env

    def create(self):
        if self.path.exists():
            import shutil
            shutil.rmtree(self.path)
        base = self.series_venv / 'bin' / 'python'
        self._run('a virtualenv for nova-scheduler',
                  [base, '-m', 'venv', self.path])
        self.install()
        self.pth.write_text(str(self.site_packages(self.series_venv)) + '\n')
        script = self.path / 'bin' / 'nova-scheduler'
        script.write_text('#!%s\nimport sys\nfrom nova.cmd.scheduler import '
                          'main\nsys.exit(main())\n' % self.python())
        script.chmod(0o755)

    def _without_series(self, what, args):
        aside = self.pth.with_suffix('.aside')
        if self.pth.exists():
            self.pth.replace(aside)
        try:
            self._run(what, [self.python(), '-m', 'pip'] + args)
        finally:
            if aside.exists():
                aside.replace(self.pth)

    def install(self):
        self._without_series('pip install image-type-filter (a wheel)', [
            'install', '-q', '--no-deps', str(layout.REPO)])

    def uninstall(self):
        self._without_series('pip uninstall image-type-filter', [
            'uninstall', '-y', 'image-type-filter'])

    def where_is(self, module):
        """Where the environment's Python imports ``module`` from, or
        None if it cannot."""
        proc = subprocess.run(
            [self.python(), '-c', 'import %s, sys; sys.stdout.write('
             '%s.__file__)' % (module, module)], capture_output=True,
            text=True, env=self.env(), cwd=str(layout.STATE), timeout=120)
        return proc.stdout if proc.returncode == 0 else None

    def start(self, name, conf):
        return processes.start(name, [self.path / 'bin' / 'nova-scheduler',
                                      '--config-file', conf],
                               env=self.env(), log=nova.log(name))


class Rollback:

    def __init__(self, ctx, cloud):
        self.ctx = ctx
        self.cloud = cloud
        self.env = SchedulerEnv(ctx.venv(nova_scheduler.NAME))
        self.cases = {}
        self.aggregate = None
        self.boots = []
        self.checks = {}

    # -- nova-scheduler -------------------------------------------------

    def restart_scheduler(self, filters_on, nova_mechanisms):
        inifile.write_conf(nova_scheduler.conf_path(), scheduler_conf(
            self.ctx.creds, filters_on, nova_mechanisms))
        nova.make_state('scheduler')
        nova_scheduler.stop(self.ctx)
        mark = logfiles.size(nova_scheduler.log_file())
        self.env.start(nova_scheduler.NAME, nova_scheduler.conf_path())
        nova_scheduler.wait(self.ctx)
        self.scheduler_mark = mark

    def filters_loaded(self):
        return LOADED_LINE in logfiles.read_from(nova_scheduler.log_file(),
                                         self.scheduler_mark)

    # -- the checks -------------------------------------------------------

    def make_cases(self):
        admin, cloud = self.ctx.admin, self.cloud
        qcow2_hosts = boot_cases.untagged_hosts(cloud, 'qcow2')
        self.cases['disk-bus'] = boot_cases.Case(
            'disk-bus', boots.upload_image(
                admin, 'rollback-qcow2-%s' % DISK_BUS, 'qcow2',
                cloud['image_files']['qcow2'], {'hw_disk_bus': DISK_BUS}),
            qcow2_hosts)
        self.cases['vmdk'] = boot_cases.Case(
            'vmdk', boots.upload_image(admin, 'rollback-vmdk', 'vmdk',
                                       cloud['image_files']['vmdk']),
            frozenset())
        reserved = boot_cases.reserved_hosts(cloud)
        self.cases['reserved'] = boot_cases.Case(
            'reserved', boots.upload_image(
                admin, 'rollback-reserved', 'raw', cloud['image_files']['raw'],
                {'trait:%s' % cloud['reserved_trait']: 'required'}),
            reserved)
        # With every other raw host disabled, the reserved host is the
        # only one free: the boot must find none.
        self.cases['untagged'] = boot_cases.Case(
            'untagged', boots.upload_image(
                admin, 'rollback-raw', 'raw', cloud['image_files']['raw']),
            frozenset())
        self.other_raw_hosts = sorted(boot_cases.untagged_hosts(cloud, 'raw'))

    def boot(self, case, label):
        client = rest.Client('admin', self.ctx.admin.password)
        record = boot_cases.boot_once(client, case, 'rollback-%s-%s' % (
            label, case.label), delete=False)
        queries, global_id = [], None
        try:
            if record.server_id:
                global_id = boot_cases.request_id(client, record.server_id)
                queries = boot_cases.queries(global_id)
        finally:
            if record.server_id:
                boots.delete(client, record.server_id)
        self.boots.append((label, record))
        verdict = boot_cases.judge(case, record)
        if verdict != 'ok':
            raise GateError(boot_cases.failure(label, case, record, verdict,
                                               global_id))
        return record, queries

    def check(self, label, ours, novas):
        """nova-scheduler schedules as it should with this project's
        filters in or out (``ours``) and Nova's mechanisms on or off
        (``novas``)."""
        trait = self.cloud['reserved_trait']
        if self.filters_loaded() != ours:
            raise GateError('%s: nova-scheduler %s "%s"' % (
                label, 'never logged' if ours else 'logged', LOADED_LINE))
        seen = {}
        record, queries = self.boot(self.cases['disk-bus'], label)
        required = set().union(*[boot_cases.root_required(q) | set(
            q.get('required', [])) for q in queries]) if queries else set()
        for want in ('COMPUTE_IMAGE_TYPE_QCOW2',
                     'COMPUTE_STORAGE_BUS_%s' % DISK_BUS.upper()):
            if want not in required:
                raise GateError('%s: the qcow2 hw_disk_bus=%s boot\'s '
                                'query lacks %s: %s' % (label, DISK_BUS,
                                                        want, queries))
        seen['disk-bus'] = record.host
        record, _ = self.boot(self.cases['vmdk'], label)
        if ours and 'vmdk' not in record.fault:
            raise GateError('%s: the vmdk fault does not name vmdk: %s'
                            % (label, record.fault))
        seen['vmdk'] = record.fault[:120]
        record, _ = self.boot(self.cases['reserved'], label)
        seen['reserved'] = record.host
        with self.disabled(self.other_raw_hosts):
            record, queries = self.boot(self.cases['untagged'], label)
        forbidden = [q for q in queries
                     if '!%s' % trait in boot_cases.root_required(q)]
        isolated = [q for q in queries if any(
            v.startswith('!in:') and self.aggregate['uuid'] in v
            for v in q.get('member_of', []))] if self.aggregate else []
        if bool(forbidden) != ours:
            raise GateError('%s: the untagged boot\'s query %s !%s: %s' % (
                label, 'lacks' if ours else 'has', trait, queries))
        if bool(isolated) != novas:
            raise GateError('%s: the untagged boot\'s query %s Nova\'s '
                            'forbidden aggregate: %s' % (
                                label, 'lacks' if novas else 'has', queries))
        seen['untagged, only the reserved host free'] = record.status
        self.checks[label] = seen

    def disabled(self, hosts):
        return _Disabled(self.ctx.admin, hosts, self.cloud)

    # -- the steps ----------------------------------------------------------

    def before(self):
        self.env.create()
        where = self.env.where_is(OUR_MODULE) or ''
        if not where.startswith(str(self.env.path)):
            raise GateError('nova-scheduler\'s environment imports %s from '
                            '%r, not from its own install'
                            % (OUR_MODULE, where))
        self.make_cases()
        self.restart_scheduler(filters_on=True, nova_mechanisms=False)
        self.check('before', ours=True, novas=False)

    def nova_mechanisms(self):
        admin = self.ctx.admin
        trait = self.cloud['reserved_trait']
        aggregate = admin.post(nova.API_URL + '/os-aggregates', {
            'aggregate': {'name': AGGREGATE}},
            headers=rest.COMPUTE_HEADERS)['aggregate']
        for host in sorted(boot_cases.reserved_hosts(self.cloud)):
            admin.post(nova.API_URL + '/os-aggregates/%s/action'
                       % aggregate['id'], {'add_host': {'host': host}},
                       headers=rest.COMPUTE_HEADERS)
        self.aggregate = admin.post(
            nova.API_URL + '/os-aggregates/%s/action' % aggregate['id'],
            {'set_metadata': {'metadata': {'trait:%s' % trait: 'required'}}},
            headers=rest.COMPUTE_HEADERS)['aggregate']
        self.restart_scheduler(filters_on=True, nova_mechanisms=True)
        self.check('nova-mechanisms-on', ours=True, novas=True)

    def lines_out(self):
        self.restart_scheduler(filters_on=False, nova_mechanisms=True)
        self.check('filters-lines-out', ours=False, novas=True)

    def uninstall(self):
        self.env.uninstall()
        if self.env.where_is(OUR_MODULE) is not None:
            raise GateError('%s still imports in nova-scheduler\'s '
                            'environment after pip uninstall' % OUR_MODULE)
        self.restart_scheduler(filters_on=False, nova_mechanisms=True)
        self.check('package-uninstalled', ours=False, novas=True)

    def reverse_order(self):
        """nova-scheduler from the package-less environment with the
        nova.conf the filters' lines were still in: it must stop at
        start-up naming the module."""
        conf = layout.path('nova', 'scheduler-reverse-order.conf')
        sections = scheduler_conf(self.ctx.creds, True, False)
        sections['DEFAULT']['log_file'] = str(
            layout.path('logs', '%s-app.log' % REVERSE))
        inifile.write_conf(conf, sections)
        proc = self.env.start(REVERSE, conf)
        try:
            code = proc.wait(timeout=REVERSE_DEADLINE)
        except subprocess.TimeoutExpired:
            processes.stop(REVERSE)
            raise GateError('nova-scheduler with the filters\' lines but '
                            'no package still ran after %ds'
                            % REVERSE_DEADLINE) from None
        finally:
            processes.stop(REVERSE)
        said = ''.join(logfiles.read_from(p, 0) for p in (
            nova.log(REVERSE), layout.path('logs', '%s-app.log' % REVERSE))
            if os.path.exists(p))
        missing = "No module named '%s'" % OUR_MODULE
        if code == 0 or missing not in said:
            raise GateError('nova-scheduler with the filters\' lines but no '
                            'package exited %s without "%s"; see %s'
                            % (code, missing, nova.log(REVERSE)))
        self.checks['reverse order'] = {'exit': code, 'said': missing}


#: (title, action, an operator's step: in the documented order).
STEPS = (
    ('Before: nova-scheduler runs the package installed in its own '
     'environment', 'before', False),
    ('Turn on Nova\'s own mechanisms beside the filters',
     'nova_mechanisms', True),
    ('Take the filters\' lines out of nova.conf', 'lines_out', True),
    ('Uninstall the package from nova-scheduler\'s environment',
     'uninstall', True),
    ('The reverse order stops nova-scheduler at start-up', 'reverse_order',
     False),
)


class _Disabled:
    """Nova compute services disabled for a block, waited for until their
    providers carry COMPUTE_STATUS_DISABLED (and, after, until they do
    not)."""

    def __init__(self, admin, hosts, cloud):
        self.admin, self.hosts, self.cloud = admin, hosts, cloud
        self.providers = {c['host']: c['provider'] for c in cloud['computes']}

    def _set(self, status):
        for svc in nova.services(self.admin, 'nova-compute'):
            if svc['host'] in self.hosts:
                body = {'status': status}
                if status == 'disabled':
                    body['disabled_reason'] = 'gate rollback check'
                self.admin.put(nova.API_URL + '/os-services/%s' % svc['id'],
                               body, headers=rest.COMPUTE_HEADERS)
        want = status == 'disabled'

        def probe():
            traits = rest.all_traits(self.admin)
            return all((STATUS_DISABLED in traits.get(
                self.providers[h], ())) == want for h in self.hosts)
        processes.wait_for('%s %s in Placement' % (STATUS_DISABLED, status),
                           probe, deadline=120)

    def __enter__(self):
        self._set('disabled')

    def __exit__(self, *exc):
        self._set('enabled')


def titles(operator_only=False):
    return [title for title, _, operator in STEPS
            if operator or not operator_only]


def run(ctx, cloud):
    started = time.monotonic()
    rollback = Rollback(ctx, cloud)
    timings, error = [], None
    for n, (title, action, _) in enumerate(STEPS, 1):
        log('step %d: %s' % (n, title))
        t0 = time.monotonic()
        try:
            getattr(rollback, action)()
        except GateError as exc:
            error = 'step %d (%s): %s' % (n, title, exc)
            log('FAILED: %s' % error)
            break
        finally:
            timings.append({'step': title,
                            'seconds': round(time.monotonic() - t0, 1)})
    failed = [r for _, r in rollback.boots
              if boot_cases.judge(_case(rollback, r), r) != 'ok']
    return {'error': error, 'seconds': round(time.monotonic() - started),
            'steps': timings, 'checks': rollback.checks,
            'boots': {'attempted': len(rollback.boots),
                      'failed': len(failed)}}


def _case(rollback, record):
    return rollback.cases[record.case]


def verdict(figures):
    return [figures['error']] if figures.get('error') else []


if __name__ == '__main__':  # pragma: no cover - a developer's shortcut
    print(json.dumps(titles(), indent=1), file=sys.stderr)
