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

"""Upgrade readiness: is it safe to turn the image-type filter on?

An oslo.upgradecheck check, with ``nova-status upgrade check``'s codes
(the status command's help lists them); 255 (``COULD_NOT_CHECK``) when the
check itself could not run.
"""

from oslo_upgradecheck import upgradecheck

from image_type_common import image_metadata
from image_type_common import image_types
from image_type_common import placement_client as pc
from image_type_filter.diagnostics import survey
from image_type_filter.scheduler import image_metadata_prefilter

Code = upgradecheck.Code
Result = upgradecheck.Result
#: oslo.upgradecheck's code for "the check could not run".
COULD_NOT_CHECK = 255


def result_name(code):
    return upgradecheck.UPGRADE_CHECK_MSG_MAP[Code(code)]


class ReadinessChecks(upgradecheck.UpgradeCommands):
    """The checks, on a survey already taken (no request of their own but
    the client's negotiated microversion)."""

    def __init__(self, client, fleet, families=(),
                 novas_metadata_prefilter=False):
        self.client = client
        self.fleet = fleet
        #: Image-metadata families to check, as if enabled.
        self.families = tuple(families)
        self.novas_metadata_prefilter = novas_metadata_prefilter

    def _check_compute_nodes(self):
        """Every compute node reports an image type, or is declared
        volume-only in Placement (``VOLUME_ONLY_TRAIT``, which the
        reporter keeps from the node's ``[virt_capabilities]
        volume_only``)."""
        hosts = len(self.fleet.hosts)
        silent = [h for h in self.fleet.hosts.values() if not h.formats]
        declared = {rp['uuid'] for rp in survey.holders(
            self.client, required=image_types.VOLUME_ONLY_TRAIT)} \
            if silent else set()
        missing = sorted(h.name for h in silent if h.uuid not in declared)
        volume_only = sorted(h.name for h in silent if h.uuid in declared)
        how = 'compute nodes found by the COMPUTE_NODE trait'
        if not hosts:
            return Result(Code.WARNING, 'no compute node found (%s)' % how)
        if missing:
            return Result(Code.FAILURE, (
                '%d of %d compute node(s) report no COMPUTE_IMAGE_TYPE_* '
                'trait: %s. nova-compute reports them itself (since Train, '
                'for every in-tree driver), so these run an older '
                'nova-compute or a driver that reports none, or have not '
                'reported yet: upgrade nova-compute or its driver there, or '
                'let virt-capabilities keep them ([virt_capabilities] '
                'image_type_traits_owner = reporter; by default it never '
                'touches them). A node that boots no image on purpose '
                '(volume-backed servers only) is declared with '
                '[virt_capabilities] volume_only = True in its nova.conf, '
                'which virt-capabilities report turns into %s (%s).' % (
                    len(missing), hosts, ', '.join(missing),
                    image_types.VOLUME_ONLY_TRAIT, how)))
        return Result(Code.SUCCESS, 'all %d compute node(s) report%s (%s)'
                      % (hosts, ', %d of them declared volume-only: %s' % (
                          len(volume_only), ', '.join(volume_only))
                         if volume_only else '', how))

    def _check_microversion(self):
        """The microversion used (one Placement below what nova-scheduler
        needs is refused before any check: PlacementTooOld)."""
        return Result(Code.SUCCESS, pc.version_str(self.client.negotiate()))

    def _check_formats(self):
        """Information: how many hosts boot each format, and which formats
        no host boots (boots of those will find no host)."""
        per_format = self.fleet.hosts_per_format()
        booted = ', '.join('%s: %d' % (fmt, len(hosts))
                           for fmt, hosts in per_format.items() if hosts)
        unsupported = [fmt for fmt, hosts in per_format.items() if not hosts]
        return Result(Code.SUCCESS, 'hosts per format: %s; no host boots: %s'
                      % (booted or 'none', ', '.join(unsupported) or 'none'))

    _upgrade_checks = (
        ('Compute nodes report image types', _check_compute_nodes),
        ('Placement microversion', _check_microversion),
        ('Image formats', _check_formats),
    )

    def _check_family(self, family, carried):
        """Hosts that report no trait of the family would get no boot of
        an image that sets one of its properties: not ready."""
        carried_here = sorted(set(family.traits) & carried)
        holders = _holders_of_any(self.client, carried_here)
        hosts = self.fleet.hosts.values()
        lacking = sorted(h.name for h in hosts if h.uuid not in holders)
        reported = [t[len(family.prefix):].lower() for t in carried_here]
        props = ' or '.join(family.properties)
        if not hosts:
            return Result(Code.WARNING, 'no compute node found')
        if lacking and family.absent_means_unknown:
            return Result(Code.SUCCESS, (
                '%d of %d compute node(s) report no %s* trait (%s): an '
                'image that sets %s may go there, and Nova\'s '
                'ImagePropertiesFilter decides; values reported: %s' % (
                    len(lacking), len(hosts), family.prefix,
                    ', '.join(lacking), props,
                    ', '.join(reported) or 'none')))
        if lacking:
            return Result(Code.FAILURE, (
                '%d of %d compute node(s) report no %s* trait, so no image '
                'that sets %s would go there: %s. Enable this family only '
                'once they do (values reported in the fleet: %s).' % (
                    len(lacking), len(hosts), family.prefix, props,
                    ', '.join(lacking), ', '.join(reported) or 'none')))
        return Result(Code.SUCCESS, 'all %d compute node(s) report a %s* '
                      'trait; values reported: %s' % (
                          len(hosts), family.prefix, ', '.join(reported)))

    def _check_novas_prefilter(self):
        if self.novas_metadata_prefilter and self.families:
            return Result(Code.WARNING,
                          image_metadata_prefilter.NOVAS_PREFILTER_BESIDE)
        return Result(Code.SUCCESS, 'on' if self.novas_metadata_prefilter
                      else 'off')

    def results(self):
        """[(name, Result)] without printing (oslo's check() prints)."""
        results = [(name, check(self))
                   for name, check in self._upgrade_checks]
        if self.families:
            carried = self.client.list_associated_traits()
            results.extend(
                ('Image metadata: %s' % name,
                 self._check_family(image_metadata.FAMILIES[name], carried))
                for name in self.families)
        results.append(('Nova\'s image_metadata_prefilter',
                        self._check_novas_prefilter()))
        return results


def _holders_of_any(client, traits):
    """The providers that carry at least one of ``traits``: one query at
    1.39 (``in:``), else one per trait."""
    if not traits:
        return set()
    if client.negotiate() >= pc.ANY_OF_TRAITS:
        traits = ['in:' + ','.join(traits)]
    return {rp['uuid'] for query in traits
            for rp in client.list_resource_providers(required=query)}


def exit_code(results):
    return max((int(result.code) for _, result in results),
               default=int(Code.SUCCESS))
