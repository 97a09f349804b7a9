"""The report job, one-shot or as a service.

A ReportJob is everything one configuration implies: capabilities, custom
traits, providers and a client. The service loop runs it every interval
(jittered so a fleet of nodes does not hit Placement in step), re-reads the
configuration on SIGHUP, and on SIGTERM finishes the current sync and exits 0.
"""

import logging
import random
import signal
import threading

from image_type_common import connection
from image_type_common import exceptions
from image_type_common.conf import loading
from virt_capabilities import conf as vc_conf
from virt_capabilities import custom_traits
from virt_capabilities import drivers
from virt_capabilities import ownership_state
from virt_capabilities import providers
from virt_capabilities import reporter as reporter_mod

LOG = logging.getLogger(__name__)


class ReportJob:
    """One configuration's sync: built (and validated) before any request."""

    def __init__(self, config_files, provider_values=(), cloud=None,
                 client=None):
        self.conf = vc_conf.load(config_files)
        self.capabilities = drivers.capabilities_from_conf(self.conf)
        custom = custom_traits.from_conf(self.conf)
        self.refs = ([providers.validate(v, '--provider')
                      for v in provider_values]
                     or providers.default_refs(self.conf))
        self.client = client or connection.client_for(self.conf, cloud)
        state = ownership_state.OwnershipState(
            loading.read(self.conf, 'state_file', 'virt_capabilities'))
        self.reporter = reporter_mod.Reporter(
            self.client, self.capabilities.traits | custom, custom, state,
            conflict_retries=loading.read(self.conf, 'conflict_retries',
                                          'virt_capabilities'))
        self.uuids = None

    def sync(self, wait=0.0):
        if self.uuids is None:
            self.uuids = providers.resolve_with_wait(
                self.client, self.refs, wait)
        report = self.reporter.sync(self.uuids)
        if any(isinstance(r.error, exceptions.ProviderNotFound)
               for r in report.results):
            self.uuids = None  # a provider went away: look again next time
        return report


def summarize(report):
    """Log the outcome of a cycle; return the one-shot exit code."""
    changed = sum(1 for r in report.results if r.changed)
    LOG.info('sync done: %d provider(s) checked, %d changed, %d already in '
             'sync by query, %d conflict(s) retried, %d failed',
             len(report.results) + report.skipped_in_sync, changed,
             report.skipped_in_sync, report.conflicts, len(report.errors))
    if report.missing_traits:
        LOG.error('Placement lacks trait(s) %s: upgrade Placement; the '
                  'other traits were reported',
                  ', '.join(sorted(report.missing_traits)))
    return 0 if report.ok else 1


def run_once(job_factory, wait):
    job = job_factory()
    return summarize(job.sync(wait))


def run_service(job_factory, interval, wait, stop_event=None):
    """Sync every ``interval`` seconds until SIGTERM; returns the exit code."""
    stop = stop_event or threading.Event()
    wake = threading.Event()
    reload_requested = threading.Event()

    def on_term(*_):
        stop.set()
        wake.set()

    def on_hup(*_):
        reload_requested.set()
        wake.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_term)
        signal.signal(signal.SIGINT, on_term)
        signal.signal(signal.SIGHUP, on_hup)
    job = job_factory()
    LOG.info('reporting %s every %.0f s (jittered)',
             ', '.join(sorted(job.capabilities.traits)) or 'no traits',
             interval)
    first = True
    while not stop.is_set():
        if reload_requested.is_set():
            reload_requested.clear()
            try:
                job = job_factory()
                LOG.info('configuration re-read')
            except exceptions.Error as exc:
                LOG.error('keeping the previous configuration: %s', exc)
        try:
            summarize(job.sync(wait if first else 0.0))
        except exceptions.Error as exc:
            LOG.warning('sync failed, next attempt at the next interval: %s',
                        exc)
        first = False
        wake.clear()
        wake.wait(interval * random.uniform(0.9, 1.1))
    LOG.info('stopping')
    return 0
