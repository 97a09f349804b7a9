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

"""Put this project's request filters into nova-scheduler, once.

The filters are built from Nova's CONF (nova.conf alone configures them) and
appended to ``nova.scheduler.request_filter.ALL_REQUEST_FILTERS``, after
Nova's own, so they run on every boot and Nova's own image-type filter, when
on, has added its trait first. A request that cannot be placed fails the
way Nova expects: ``RequestFilterFailed``, which nova-scheduler turns into
NoValidHost with the reason in the server's fault.
"""

import logging

from nova import conf as nova_conf
from nova import exception as nova_exception
from nova.objects import image_meta
from nova.scheduler import request_filter as nova_request_filter

from image_type_common import exceptions
from image_type_filter import conf as itf_conf
from image_type_filter import exceptions as filter_exceptions
from image_type_filter import settings as settings_mod
from image_type_filter.nova import placement
from image_type_filter.scheduler import pipeline as filter_pipeline
from image_type_filter.scheduler import rebuild
from image_type_filter.scheduler import spec_fields

LOG = logging.getLogger(__name__)
CONF = nova_conf.CONF
MARK = '_image_type_filter'

_pipeline = None
_placement = None


def installed_filters():
    return [f for f in nova_request_filter.ALL_REQUEST_FILTERS
            if getattr(f, MARK, False)]


def install():
    """Register options, build the pipeline, add the filters. Idempotent.

    A configuration the filters refuse (a bad isolation rule) stops
    nova-scheduler at start-up with one line saying why.
    """
    global _pipeline, _placement
    itf_conf.register_nova_opts(CONF)
    client = placement.client()
    try:
        pipeline = filter_pipeline.RequestFilterPipeline.from_settings(
            settings_mod.FilterSettings.from_conf(CONF), placement=client,
            image_property_names=frozenset(
                image_meta.ImageMetaProps.fields))
    except exceptions.ConfigError as exc:
        LOG.error('image-type-filter: %s', exc)
        raise
    uninstall()
    _pipeline, _placement = pipeline, client
    for name, one_filter in pipeline.filters:
        nova_request_filter.ALL_REQUEST_FILTERS.append(
            _as_nova_filter(name, one_filter))
    LOG.info('image-type-filter request filters added to nova-scheduler: %s',
             ', '.join(name for name, _ in pipeline.filters))


def uninstall():
    """Take our filters out of Nova's list again (tests, re-install)."""
    global _pipeline, _placement
    for nova_filter in installed_filters():
        nova_request_filter.ALL_REQUEST_FILTERS.remove(nova_filter)
    _pipeline = _placement = None


def _as_nova_filter(name, one_filter):
    def nova_filter(ctxt, request_spec):
        try:
            return one_filter(ctxt, request_spec)
        except filter_exceptions.NoValidHost as exc:
            raise nova_exception.RequestFilterFailed(reason=str(exc))
    nova_filter.__name__ = 'image_type_filter.' + name
    setattr(nova_filter, MARK, True)
    return nova_request_filter.trace_request_filter(nova_filter)


def rebuild_check(host_uuid, spec_obj):
    """Can this host take the rebuild's new image? (one Placement read)"""
    if _pipeline is None:
        return True
    reason = rebuild.refusal(
        _pipeline, spec_obj,
        lambda: _placement.get_provider_traits(host_uuid)[0])
    if reason is None:
        return True
    # Nova's host filters can give no reason to the fault: the operator
    # finds it here, naming the server and the image.
    LOG.warning('rebuild of server %s to image %s refused on host %s: %s',
                spec_fields.field(spec_obj, 'instance_uuid'),
                spec_fields.field(spec_fields.field(spec_obj, 'image'), 'id'),
                host_uuid, reason)
    return False
