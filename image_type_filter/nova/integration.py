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

"""Put this project's request filters into nova-scheduler, once, and keep
reserved hosts reserved whatever Nova does with them.

The filters, built from Nova's CONF, are one entry of Nova's
``ALL_REQUEST_FILTERS``, after Nova's own; a request that cannot be placed
raises Nova's ``RequestFilterFailed``; log-only mode changes nothing
(``scheduler.log_only``). A Nova that lacks a name or no longer runs the
list: doc/source/install/scheduler.rst's "A Nova this release was not
tested with".

Module-global state, all of it needed: ``_installed`` (Nova calls the
entry and the host filter with nothing of ours to carry it), its lock,
the once-per-process memory of a Nova that did not run the list
(``_not_run``), and two registries of requests (weak sets, so an entry
goes with its request and nothing is set on Nova's RequestSpec).
"""

import dataclasses
import logging
import threading
import weakref

from image_type_common import exceptions
from image_type_common import nova_releases
from image_type_filter import conf as itf_conf
from image_type_filter import exceptions as filter_exceptions
from image_type_filter import settings as settings_mod
from image_type_filter.nova import compat
from image_type_filter.nova import placement
from image_type_filter.scheduler import log_only
from image_type_filter.scheduler import pipeline as filter_pipeline
from image_type_filter.scheduler import spec_fields
from image_type_filter.scheduler import warn_once

LOG = logging.getLogger(__name__)
#: Set on our own entry function, to find it in Nova's list.
MARK = '_image_type_filter'
ENTRY = 'image_type_filter.request_filters'
HOST_FILTER = 'ImageTypeRebuildFilter'
#: Nova's host filter that checks an image's architecture against a
#: host's supported_instances.
IMAGE_PROPERTIES_FILTER = 'ImagePropertiesFilter'


@dataclasses.dataclass(frozen=True)
class Installed:
    """What ``install`` built, read by every request (one reference, so a
    request never mixes two installs)."""

    nova: compat.Nova
    settings: settings_mod.FilterSettings
    #: None when the request filters could not be added.
    pipeline: object = None
    placement: object = None


_installed = None
_install_lock = threading.Lock()
_not_run = warn_once.WarnOnce(limit=1)
#: The requests the entry ran on; read by ``request_check``.
_ran = weakref.WeakSet()
#: The requests ``request_check`` has already judged.
_checked = weakref.WeakSet()


def installed_filters():
    """Our entries in Nova's list (one once installed)."""
    nova = _installed.nova if _installed else compat.resolve()
    filters = nova.get(compat.ALL_REQUEST_FILTERS) or []
    return [f for f in filters if getattr(f, MARK, False)]


def install():
    """Register options, build the pipeline, add it to Nova; idempotent.
    The ``compat.Nova`` found; ConfigError or NovaIncompatible, after one
    ERROR line, stops nova-scheduler."""
    with _install_lock:
        nova = compat.resolve()
        conf = nova.get(compat.CONF)
        if conf is None or nova.lacks(compat.CORE):
            _stop(nova, 'image-type-filter cannot run at all in %s'
                  % nova.report())
        itf_conf.register_nova_opts(conf)
        try:
            _add_filters(nova, conf)
        except exceptions.ConfigError as exc:
            LOG.error('image-type-filter: %s', exc)
            raise
        return nova


def _add_filters(nova, conf):
    global _installed
    settings = settings_mod.FilterSettings.from_conf(conf)
    missing = nova.lacks(compat.REQUEST_FILTERS, compat.HOST_FILTER)
    if missing:
        line = 'image-type-filter cannot add its filters in %s' % (
            nova.report())
        if settings.isolation_enforced:
            _stop(nova, line + '; [image_isolation] is enforced, so '
                  'nova-scheduler stops here rather than place other '
                  'servers on reserved hosts (install an image-type-'
                  'filter release that supports this Nova, or set '
                  '[image_type_filter] enforce = False to start without '
                  'isolation)')
        LOG.error('%s; nova-scheduler runs without them, as Nova '
                  'alone: no host is filtered by image type, isolation '
                  'or image metadata, and rebuilds are not checked',
                  line)
        _remove_entries(nova)
        _installed = Installed(nova, settings)
        return
    _report_the_rest(nova)
    _check_host_filter(conf, settings)
    client = placement.client(nova.get(compat.REPORT_CLIENT))
    pipeline = filter_pipeline.RequestFilterPipeline.from_settings(
        settings, placement=client, image_property_names=frozenset(
            nova.get(compat.IMAGE_META_PROPS).fields),
        host_guests=_host_guests(nova, conf))
    _installed = Installed(nova, settings, pipeline, client)
    filters = nova.get(compat.ALL_REQUEST_FILTERS)
    # One assignment: a request iterating the list meanwhile sees it
    # before or after, never without our entry.
    filters[:] = [f for f in filters if not getattr(f, MARK, False)] + [
        _as_nova_filter(nova)]
    LOG.info('image-type-filter request filters added to nova-scheduler '
             '(Nova %s): %s; %s', nova.version,
             ', '.join(name for name, _ in pipeline.filters),
             'enforced' if settings.enforce else
             'log-only ([image_type_filter] enforce = False): requests '
             'are logged, not changed')


def _stop(nova, line):
    LOG.error('%s', line)
    raise compat.NovaIncompatible(line)


def _report_the_rest(nova):
    """What is missing but has a fallback, and a Nova outside the range."""
    for loss in nova.optional_losses():
        LOG.warning('image-type-filter: Nova %s has no %s', nova.version,
                    loss)
    if not nova.supported:
        LOG.warning('image-type-filter was not tested with Nova %s '
                    '(supported: %s): every Nova name it uses is present; '
                    'ImageTypeRebuildFilter checks on every request that '
                    'nova-scheduler runs its request filters',
                    nova.version, nova_releases.RANGE)


def _enabled_filters(conf):
    """``[filter_scheduler] enabled_filters``, or None in a Nova without
    the option."""
    try:
        return list(conf.filter_scheduler.enabled_filters)
    except Exception:  # noqa: BLE001 - a Nova without the option
        return None


def _check_host_filter(conf, settings):
    enabled = _enabled_filters(conf)
    if enabled is not None and HOST_FILTER in enabled:
        return
    what = ('rebuilds with a new image are not checked, and nothing checks '
            'that nova-scheduler runs the request filters')
    if settings.isolation_enforced:
        raise exceptions.ConfigError(
            '[image_isolation] is enforced but %s is not in '
            '[filter_scheduler] enabled_filters: %s, so reserved hosts '
            'could take other servers; add it' % (HOST_FILTER, what))
    LOG.warning('image-type-filter: %s is not in [filter_scheduler] '
                'enabled_filters: %s', HOST_FILTER, what)


def _host_guests(nova, conf):
    """The image-metadata prefilter's ``host_guests``: each node's
    ``supported_hv_specs`` (what ImagePropertiesFilter checks), in every
    cell. None when that filter is not enabled (Nova would not refuse such
    hosts) or this Nova lacks a name it needs."""
    scatter = nova.get(compat.SCATTER_GATHER)
    cell_failed = nova.get(compat.CELL_FAILED)
    by_uuids = nova.get(compat.COMPUTE_NODES_BY_UUIDS)
    if None in (scatter, cell_failed, by_uuids) or \
            IMAGE_PROPERTIES_FILTER not in (_enabled_filters(conf) or ()):
        return None

    def host_guests(ctxt, uuids):
        if ctxt is None:
            return None
        guests = {}
        for cell, nodes in scatter(ctxt, by_uuids, list(uuids)).items():
            if cell_failed(nodes):
                LOG.warning('image-type-filter: cannot read the compute '
                            'nodes of cell %s (%s): "No valid host" will not '
                            'name the architecture', cell, nodes)
                return None
            for node in nodes:
                guests[node.uuid] = frozenset(
                    spec.arch for spec in node.supported_hv_specs or ())
        return guests

    return host_guests


def _remove_entries(nova):
    filters = nova.get(compat.ALL_REQUEST_FILTERS)
    if filters is not None:
        filters[:] = [f for f in filters if not getattr(f, MARK, False)]


def _as_nova_filter(nova):
    failed = nova.get(compat.REQUEST_FILTER_FAILED)

    def request_filters(ctxt, request_spec):
        installed = _installed
        _record(_ran, request_spec)
        if installed is None or installed.pipeline is None:
            return False
        if not installed.settings.enforce:
            outcome = installed.pipeline.outcome(ctxt, request_spec)
            LOG.info('%s', log_only.boot_line(
                spec_fields.field(request_spec, 'instance_uuid'), outcome))
            return False
        try:
            return bool(installed.pipeline(ctxt, request_spec))
        except filter_exceptions.NoValidHost as exc:
            raise failed(reason=str(exc))

    request_filters.__name__ = ENTRY
    setattr(request_filters, MARK, True)
    trace = nova.get(compat.TRACE_REQUEST_FILTER)
    return trace(request_filters) if trace else request_filters


def _record(registry, request_spec):
    try:
        registry.add(request_spec)
    except TypeError:
        pass  # not weakly referable: request_check cannot tell, says so


def request_check(spec_obj):
    """Did nova-scheduler run our request filters on this (not rebuild)
    request? True when it did or they were never added; otherwise an
    ERROR line, and False under enforced isolation, so the request ends
    in "No valid host" rather than on a reserved host."""
    installed = _installed
    if installed is None or installed.pipeline is None:
        return True
    if spec_obj in _ran:
        return True
    enforced = installed.settings.isolation_enforced
    if spec_obj not in _checked:
        _record(_checked, spec_obj)
        if enforced or _not_run.first_time(True):
            LOG.error(
                'image-type-filter: nova-scheduler (Nova %s) did not run '
                'its request filters on the request for server %s: it does '
                'not run %s from nova.scheduler.request_filter.'
                'ALL_REQUEST_FILTERS (supported: %s); %s',
                installed.nova.version,
                spec_fields.field(spec_obj, 'instance_uuid'), ENTRY,
                nova_releases.RANGE,
                'every host is refused for it, since [image_isolation] is '
                'enforced and reserved hosts must not take other servers '
                '(set [image_type_filter] enforce = False to schedule '
                'without this project\'s filters)' if enforced else
                'requests are scheduled without them (logged once)')
    return not enforced


def rebuild_refusal(host_uuid, spec_obj):
    """Why this host cannot take the rebuild's new image, in the words
    of the fault the user sees, or None. One Placement read; a refusal is
    also a WARNING line with the server, image and host."""
    installed = _installed
    if installed is None or installed.pipeline is None:
        return None
    server = spec_fields.field(spec_obj, 'instance_uuid')
    image = spec_fields.field(spec_fields.field(spec_obj, 'image'), 'id')
    try:
        reason = installed.pipeline.rebuild_refusal(
            spec_obj,
            lambda: installed.placement.get_provider_traits(host_uuid)[0])
    except exceptions.Error as exc:
        return _unchecked_rebuild(installed, server, image, host_uuid, exc)
    if not installed.settings.enforce:
        LOG.info('%s', log_only.rebuild_line(server, image, host_uuid,
                                             reason))
        return None
    if reason is None:
        return None
    LOG.warning('rebuild of server %s to image %s refused on host %s: %s',
                server, image, host_uuid, reason)
    return 'The server\'s host cannot take the new image. %s%s.' % (
        reason[:1].upper(), reason[1:].rstrip('.'))


def _unchecked_rebuild(installed, server, image, host_uuid, exc):
    """The rebuild check when Placement could not be read: refused (the
    fault's reason) if isolation is enforced, let through (None)
    otherwise; one line either way."""
    if installed.settings.isolation_enforced:
        LOG.error('rebuild of server %s to image %s refused on host %s: '
                  'its traits could not be read from Placement (%s), and '
                  'with [image_isolation] enforced a host takes no image '
                  'unchecked', server, image, host_uuid, exc)
        return ('The server\'s host could not be checked for the new image '
                '(its traits could not be read), and with image isolation '
                'enforced a host takes no image unchecked.')
    LOG.warning('rebuild of server %s to image %s not checked on host %s: '
                'its traits could not be read from Placement (%s); let '
                'through, as Nova alone would', server, image, host_uuid,
                exc)
    return None
