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

"""The report job, one-shot or as a service, and its undo.

A ReportJob is everything one configuration implies: the plan, the trait
store and its client, the reporter. ``run_service`` runs it every interval
(jittered, so a fleet of nodes does not hit Placement in step); how it takes
signals, outages and refused credentials: doc/source/install/compute.rst
("As a service"). A stop is honoured at once, except inside a
``control.shielded`` block (one provider's sync,
``Reporter.sync_provider``, and the status file's record of the cycle),
where it waits for the block's end or a conflict's back-off.
``run_remove`` undoes what the reporter set.
"""

import contextlib
import logging
import random
import threading
import time

from image_type_common import connection
from image_type_common import control as control_mod
from image_type_common import exceptions
from virt_capabilities import ironic_node_traits
from virt_capabilities import logs
from virt_capabilities import ownership
from virt_capabilities import ownership_state
from virt_capabilities import plan as plan_mod
from virt_capabilities import reporter as reporter_mod
from virt_capabilities import status_file
from virt_capabilities.conf import reporter as reporter_conf

LOG = logging.getLogger(__name__)


class ReportJob:
    """One configuration's sync: built (and validated) before any request."""

    def __init__(self, config_files, provider_values=(), cloud=None,
                 client=None, sleep=time.sleep, config_dirs=(),
                 for_removal=False):
        self.plan = plan_mod.NodePlan.from_files(config_files,
                                                 provider_values, config_dirs)
        # Removing works from the state's records, by provider uuid: the
        # providers are needed only for the image types it kept.
        if self.plan.provider_needed and (not for_removal or
                                          self.plan.owns_image_types):
            raise self.plan.provider_needed
        self.conf = self.plan.conf
        # Before any client: a state file that is not ours is a ConfigError.
        state = ownership_state.OwnershipState(
            self.plan.settings.state_file,
            name=self.plan.settings.reporter_name)
        if self.plan.on_ironic_node:
            # No Placement: the traits go where Nova's ironic driver
            # takes them from.
            store = ironic_node_traits.store_for(self.conf, cloud)
        else:
            store = reporter_mod.PlacementTraits(
                client or connection.client_for(self.conf, cloud))
        self.reporter = reporter_mod.Reporter(
            None, self.plan.rule, state,
            conflict_retries=self.plan.settings.conflict_retries, sleep=sleep,
            store=store)
        self.kind = store.kind
        self.uuids = None
        self.missing = []

    def resolve(self, wait=0.0):
        """The providers to sync; those not found are remembered, and
        looked up again next time."""
        if self.uuids is None or self.missing:
            self.uuids, self.missing = self.reporter.store.resolve_with_wait(
                self.plan.refs, wait, sleep=self.reporter.sleep)
        return self.uuids

    def sync(self, wait=0.0):
        report = self.reporter.sync(self.resolve(wait))
        report.missing_providers = list(self.missing)
        if any(isinstance(r.error, exceptions.ProviderNotFound)
               for r in report.results):
            self.uuids = None  # a provider went away: look again next time
        return report

    def dry_run(self, wait=0.0):
        """(ref, uuid, added, removed) per provider found; writes nothing.
        Those not found are in ``missing``."""
        uuids = self.resolve(wait)
        found = [ref for ref in self.plan.refs if ref not in self.missing]
        return [(ref, uuid, *self.reporter.preview(uuid))
                for ref, uuid in zip(found, uuids, strict=True)]


class FailureLog:
    """Says an outage once, not once a cycle, and says when it is over.

    A failure is "the same" when the error's kind is (and the provider,
    for a provider's error). A one-shot run's is its own: it logs every
    failure. Not quieted, by design: a state that cannot be saved
    (each cycle may set traits nobody will remember), and Placement's
    missing traits or providers (configuration, not an outage).
    """

    def __init__(self):
        self._said = set()
        self._failed_cycles = 0

    def failed(self, exc, level, msg, *args, uuid=None):
        key = type(exc).__name__, uuid
        if key in self._said:
            LOG.debug('still failing: %s', msg % args)
        else:
            self._said.add(key)
            LOG.log(level, msg, *args)

    def cycle_done(self, ok):
        if not ok:
            self._failed_cycles += 1
            return
        if self._failed_cycles:
            LOG.info('sync recovered after %d failed cycle(s)',
                     self._failed_cycles)
        self._said.clear()
        self._failed_cycles = 0


def summarize(report, failures=None):
    """Log the outcome of a cycle; return the one-shot exit code.

    ``failures``: the service's FailureLog, so that the same per-provider
    error cycle after cycle is said once."""
    failures = failures if failures is not None else FailureLog()
    for result in report.errors:
        failures.failed(result.error, logging.ERROR, '%s %s: %s',
                        report.kind, result.uuid, result.error,
                        uuid=result.uuid)
    changed = sum(1 for r in report.results if r.changed)
    conflicts = sum(r.conflicts for r in report.results)
    LOG.info('sync done: %d %s(s) checked, %d changed, %d already in sync '
             'by query, %d conflict(s) retried, %d failed',
             len(report.results) + report.skipped_in_sync, report.kind,
             changed, report.skipped_in_sync, conflicts,
             len(report.errors))
    if report.missing_traits:
        LOG.error('Placement lacks trait(s) %s: upgrade Placement; the '
                  'other traits were reported',
                  ', '.join(sorted(report.missing_traits)))
    if report.missing_providers:
        LOG.error('%s; the others were synced', report.missing_line())
    if report.state_error is not None:
        # Last: the one line a failed run ends with.
        LOG.error('%s', report.state_error)
    return 0 if report.ok else 1


def _record_status(job, report=None, error=None,
                   say=lambda exc: LOG.warning('%s', exc)):
    """The status file for monitoring; whether it could be written. If
    not, ``say(exc)``: by default a warning, for a failure that has its
    own line already."""
    try:
        status_file.record(job.plan.settings.status_file,
                           job.plan.settings.reporter_name, report, error)
    except status_file.StatusNotSaved as exc:
        say(exc)
        return False
    return True


def run_once(job_factory, wait):
    job = job_factory()
    logs.setup(job.conf)
    try:
        report = job.sync(wait)
    except exceptions.Error as exc:
        _record_status(job, error=exc)
        raise
    code = summarize(report)
    saved = _record_status(job, report, say=lambda exc: LOG.error('%s', exc))
    return code if saved else 1


def run_service(job_factory, interval, wait, control=None):
    """Sync every ``interval`` seconds until stopped; returns the exit code.

    ``job_factory(sleep)`` builds a ReportJob whose waits use ``sleep``.
    ``control`` is how it is told to stop or reload: the CLI's own (its
    signals already routed there), or a library caller's; without one, a
    new one, with the signals routed to it when on the main thread.
    """
    if control is None:
        control = control_mod.Control()
        if threading.current_thread() is threading.main_thread():
            control_mod.install(control)
    failures = FailureLog()
    refused = 0  # tries in a row the credentials were refused
    job = None
    first = True  # no sync has run yet: --wait, and exit 2 on bad config
    try:
        with control.interruptible():
            while not control.stop_requested:
                reload = control.take_reload()
                if job is None or refused or reload:
                    # Refused last time, the fixed credentials arrive in
                    # the configuration: it is read again too.
                    try:
                        job = _rebuilt(job, job_factory, control, failures,
                                       interval, reload)
                    except control_mod.ReloadRequested:
                        continue  # read again, at once
                    except exceptions.CredentialsRefused as exc:
                        # --os-cloud asks Keystone for a token first.
                        refused = _credentials_refused(
                            failures, exc, interval, refused, control)
                        continue
                failed = report = None
                try:
                    report = job.sync(wait if first else 0.0)
                    summarize(report, failures)
                except control_mod.ReloadRequested:
                    continue  # re-read at once, and sync with what was read
                except exceptions.CredentialsRefused as exc:
                    with control_mod.shielded():
                        _record_status(job, error=exc)
                    refused = _credentials_refused(failures, exc, interval,
                                                   refused, control)
                    continue
                except exceptions.ConfigError as exc:
                    if first:
                        raise  # at start-up: exit 2, restarting won't help
                    failed = (exc, logging.ERROR, 'sync failed: %s; fix the '
                              'configuration and send SIGHUP')
                except exceptions.Error as exc:
                    failed = (exc, logging.WARNING, 'sync failed, next '
                              'attempt at the next interval: %s')
                refused = 0
                # The cycle's bookkeeping is not cut short by a SIGHUP (it
                # waits for the next cycle) nor split by a stop.
                with control_mod.shielded():
                    _cycle_done(job, report, failed, failures)
                first = False
                # A SIGHUP ends the wait: the loop re-reads it.
                with contextlib.suppress(control_mod.ReloadRequested):
                    control.wait(interval * random.uniform(0.9, 1.1))
    except control_mod.Stopping:
        pass
    LOG.info('stopping')
    return 0


def _cycle_done(job, report, failed, failures):
    """Say how the cycle ended (once per outage) and record it in the
    status file."""
    # Logged out of the except block: oslo.log appends the exception being
    # handled, which would say it twice.
    if failed is not None:
        exc, level, msg = failed
        failures.failed(exc, level, msg, exc)
    _record_status(job, report, failed[0] if failed else None,
                   say=lambda exc: failures.failed(exc, logging.ERROR,
                                                   '%s', exc))
    failures.cycle_done(failed is None and not report.errors)


def _credentials_refused(failures, exc, interval, refused, control):
    """Say a refusal once per outage, wait the back-off (a stop or a
    SIGHUP cuts it short); returns the tries refused so far."""
    delay = reporter_conf.CREDENTIALS_BACKOFF.delay(refused, cap=interval)
    with control_mod.shielded():
        failures.failed(exc, logging.ERROR,
                        '%s; retrying with back-off (next in %.0f s), '
                        'reading the configuration files again before each '
                        'try', exc, delay)
        failures.cycle_done(False)
    with contextlib.suppress(control_mod.ReloadRequested):
        control.wait(delay)  # a SIGHUP: the loop re-reads it anyway
    return refused + 1


def run_remove(job_factory):
    """``virt-capabilities remove`` (what it does:
    ``virt_capabilities.cmd.remove.Remove``); returns the exit code."""
    job = job_factory()
    logs.setup(job.conf)
    state_file = job.plan.settings.state_file
    ownership.check_removable(job.reporter.rule, state_file,
                              ownership_state.read_document(state_file))
    uuids = list(job.reporter.state.providers)
    if job.plan.owns_image_types:
        uuids += job.resolve()
    if not uuids and not job.missing:
        # Removed before, or never set: nothing is written, not even a
        # lock file (``remove-twice-writes-nothing``).
        LOG.info('remove done: nothing recorded is left to remove')
        status_file.remove(job.plan.settings.status_file)
        return 0
    report = job.reporter.remove(uuids)
    report.missing_providers = list(job.missing)
    for result in report.errors:
        LOG.error('%s %s: %s', report.kind, result.uuid, result.error)
    removed = sum(len(r.removed) for r in report.results)
    LOG.info('remove done: %d trait(s) removed from %d %s(s), %d failed',
             removed, sum(1 for r in report.results if r.changed),
             report.kind, len(report.errors))
    if job.plan.owns_image_types and not report.errors:
        LOG.info('the image-type traits it kept are removed: where '
                 'nova-compute runs, it reports its own again at its next '
                 'update')
    if report.missing_providers:
        LOG.error('%s; the others were done', report.missing_line())
    if report.state_error is not None:
        LOG.error('%s', report.state_error)
    if not report.ok:
        return 1
    status_file.remove(job.plan.settings.status_file)
    return 0


def _rebuilt(job, job_factory, control, failures, interval, reload):
    """The job for the configuration as it reads now: the first, or one
    replacing ``job`` (a SIGHUP, or a retry after refused credentials)
    that inherits what it set. A configuration that cannot be read keeps
    ``job``, said once per outage; with no job yet it is raised (exit 2).
    Refused credentials are raised: the caller backs off."""
    try:
        fresh = job_factory(control.sleep)
    except Exception as exc:  # noqa: BLE001 - the service lives on
        if job is None or isinstance(exc, exceptions.CredentialsRefused):
            raise
        failures.failed(exc, logging.ERROR,
                        'keeping the previous configuration: %s', exc)
        return job
    if job is None:
        # nova.conf's log options are the first job's: a SIGHUP keeps them.
        logs.setup(fresh.conf)
        LOG.info('reporting %s every %.0f s (jittered)',
                 ', '.join(sorted(fresh.plan.traits)) or 'no traits',
                 interval)
        return fresh
    if reload:
        LOG.info('configuration re-read')
    # What the previous job set stays known, also with no state file: a
    # custom trait dropped from the configuration is still removed.
    fresh.reporter.state.adopt(job.reporter.state)
    return fresh
