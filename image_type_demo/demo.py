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

"""The demo: a mixed fleet on an embedded Placement, every format requested.

Hosts are described by their own nova.conf and reported through the real
reporter; every request goes through the real request filter and Placement.
"""

import logging

from image_type_common import image_metadata
from image_type_common import image_types
from image_type_demo import fleet
from image_type_demo import progress as progress_mod
from image_type_filter import exceptions as filter_exceptions
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.diagnostics import readiness
from image_type_filter.diagnostics import survey
from image_type_filter.diagnostics import verdicts
from image_type_filter.scheduler import pipeline
from placement_runner import embedded

LOG = logging.getLogger(__name__)
RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 5}


#: One image per image-metadata family: (disk_format, properties).
METADATA_IMAGES = [
    ('vmdk', {'hw_disk_bus': 'scsi'}),
    ('qcow2', {'hw_vif_model': 'e1000e'}),
    ('qcow2', {'hw_video_model': 'qxl'}),
    ('qcow2', {'hw_architecture': 'aarch64'}),
    ('qcow2', {'hw_emulation_architecture': 'aarch64'}),
    ('qcow2', {'hw_viommu_model': 'smmuv3'}),
]


def filter_settings(enabled):
    """Every filter on (with the Trove rule and every image-metadata
    family), or every one off: Nova unaided."""
    return settings.FilterSettings.defaults(
        image_type_enabled=enabled, isolation_enabled=enabled,
        isolation_rules=(fleet.TROVE_RULE,),
        image_metadata_families=image_metadata.NAMES if enabled else ())


def run(progress_stream=None, then=None, placement_args=None):
    """Build the fleet, run every request; return the demo's JSON document.

    ``then(placement, document)``, if given, is called while Placement and
    the fleet still run (``demo --serve`` keeps them for hands-on use).
    ``placement_args`` go to ``EmbeddedPlacement`` (backend, workers,
    database_url).
    """
    hosts = fleet.demo_fleet()
    with embedded.EmbeddedPlacement(**(placement_args or {})) as placement:
        bar = progress_mod.Progress(len(hosts), 'building the fleet',
                                    stream=progress_stream, min_items=1)
        # On a kept database a second run finds its hosts there: the same
        # providers, their traits reported again.
        fleet.build(placement, hosts, bar, reuse=True)
        bar.done()
        client = placement.client()
        names = {h.uuid: h.name for h in hosts}
        pipelines = {enabled: pipeline.RequestFilterPipeline.from_settings(
            filter_settings(enabled), placement=client)
            for enabled in (True, False)}
        cases = [(fmt, True, False, {}) for fmt in image_types.FORMATS]
        cases += [('vmdk', False, False, {}), ('vmdk', True, True, {}),
                  ('qcow2', True, False, fleet.TROVE_TAG)]
        cases += [(fmt, True, False, properties)
                  for fmt, properties in METADATA_IMAGES]
        requests = []
        for disk_format, enabled, volume_backed, properties in cases:
            spec = our_filters.RequestSpec.for_boot(
                disk_format, RESOURCES, is_bfv=volume_backed,
                properties=properties)
            try:
                found = our_filters.get_candidates(client, pipelines[enabled],
                                                   spec)
                # A kept database may hold providers of its own.
                candidates = sorted(names.get(u, u)
                                    for u in found.provider_uuids)
                reason = None if candidates else \
                    verdicts.no_valid_host_reason(client, survey.take(client),
                                                  spec)
            except filter_exceptions.NoValidHost as exc:
                candidates, reason = [], str(exc)
            requests.append({
                'disk_format': disk_format, 'filter_enabled': enabled,
                'volume_backed': volume_backed,
                'image_properties': properties, 'candidates': candidates,
                'reason': reason and 'No valid host: ' + reason})
        document = {
            'hosts': [{'name': h.name, 'compute_driver': h.compute_driver,
                       'formats': h.formats,
                       'reporter_writes': h.reporter_writes} for h in hosts],
            'requests': requests,
        }
        if then is not None:
            then(placement, document)
    return document


def ready_families(client):
    """The image-metadata families every compute node reports a trait of:
    those status passes, so the only ones README lets a nova.conf enable."""
    checks = readiness.ReadinessChecks(client, survey.take(client),
                                       families=image_metadata.NAMES)
    rows = dict(checks.results())
    return tuple(name for name in image_metadata.NAMES
                 if rows['Image metadata: %s' % name].code
                 == readiness.Code.SUCCESS)


def nova_conf(placement, families=()):
    """A complete nova.conf for the running demo, one its own ``status``
    passes: how to reach its Placement, the image-type filter and the
    Trove host's isolation rule as the demo ran them, and only the
    image-metadata ``families`` every host reports (the demo ran all of
    them, to show each). Comments on their own lines only: oslo.config
    has no inline comments; no blank line (the block is one paragraph)."""
    if families:
        metadata = 'families = %s\n' % ', '.join(families)
    else:
        metadata = ('# No family enabled: some hosts report none of each '
                    'family\'s traits\n# (status --family all says '
                    'which); try one with candidates --family NAME.\n')
    return ('%(placement)s'
            '[scheduler]\n'
            'filter_hosts_by_image_type_support = True\n'
            '[image_isolation]\n'
            '# The Trove host takes only requests asking for %(rule)s.\n'
            'enabled = True\n'
            'rules = %(rule)s\n'
            '[image_metadata_prefilter]\n'
            '%(metadata)s'
            % {'placement': placement.nova_conf_section(),
               'rule': fleet.TROVE_RULE, 'metadata': metadata})


#: What to try once the demo serves: each passes with the printed
#: nova.conf and with the shell's OS_* alone (a family the configuration
#: does not enable is named with --family, never ignored in silence).
TRY = (
    'image-type-filter candidates --disk-format vmdk --explain',
    'image-type-filter candidates --disk-format qcow2 '
    '--image-property hw_architecture=aarch64 --family architecture',
    'image-type-filter status',
    'openstack image-type candidates --disk-format ploop',
)


def connection_help(placement):
    """What candidates, status and openstack need to reach ``placement``."""
    return ('Placement with the demo fleet is serving at %(endpoint)s '
            '(pid %(pid)s) until Ctrl-C.\n\nIn a nova.conf (--config-file):'
            '\n%(conf)s\n'
            'Or in a shell (the filters then as in the defaults):\n'
            '  export OS_AUTH_TYPE=admin_token '
            'OS_ENDPOINT=%(endpoint)s OS_TOKEN=%(token)s\n\nThen try:\n'
            '%(try)s'
            % {'endpoint': placement.endpoint, 'token': placement.token,
               'pid': placement.pid,
               'conf': nova_conf(placement,
                                 ready_families(placement.client())),
               'try': ''.join('  %s\n' % line for line in TRY)})
