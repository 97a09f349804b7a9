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

"""What a node's nova.conf says to report, decided offline.

``virt-capabilities show`` prints a NodePlan and ``report`` syncs one, so
``show`` is exactly the dry run of ``report``'s decisions: the same
validation of the configuration, the same traits, custom ones included.
``report`` alone also refuses a plan with ``provider_needed`` and a node
with no credentials for Placement (or Ironic): ``service.ReportJob``.
"""

import dataclasses
import logging
import os

from image_type_common import exceptions
from image_type_common import image_types
from virt_capabilities import conf as vc_conf
from virt_capabilities import drivers
from virt_capabilities import ownership
from virt_capabilities import ownership_state
from virt_capabilities import providers
from virt_capabilities import settings as settings_mod
from virt_capabilities.conf import reporter as reporter_conf

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class NodePlan:
    #: The parsed files, for what other libraries read themselves
    #: (oslo.log's logging options, keystoneauth1's [placement]).
    conf: object
    settings: settings_mod.NodeSettings
    capabilities: drivers.Capabilities
    refs: tuple
    #: Why there are no refs: the driver needs --provider (report refuses).
    provider_needed: Exception = None

    @classmethod
    def from_files(cls, config_files, provider_values=(), config_dirs=()):
        """Load and validate; ConfigError (exit 2) for anything wrong."""
        conf = vc_conf.load(config_files, config_dirs=config_dirs)
        settings = settings_mod.NodeSettings.from_conf(conf)
        capabilities = drivers.capabilities(settings)
        plan = cls(conf, settings, capabilities, ())
        if plan.on_ironic_node and plan.owns_image_types:
            raise exceptions.ConfigError(
                '[virt_capabilities] image_type_traits_owner = reporter is '
                'refused with compute_driver %s: nova-compute\'s resource '
                'tracker keeps an ironic node\'s COMPUTE_IMAGE_TYPE_* '
                'traits (its capability traits) and its ironic driver '
                'replaces every other trait of the provider with the Ironic '
                'node\'s; leave it at nova-compute'
                % capabilities.compute_driver)
        if settings.volume_only and capabilities.formats:
            raise exceptions.ConfigError(
                '[virt_capabilities] volume_only = True, but nova-compute '
                'reports image types on this node (%s): list them in '
                '[compute] image_type_exclude_list too, so that it boots '
                'none' % ', '.join(sorted(capabilities.formats)))
        try:
            plan = dataclasses.replace(plan, refs=tuple(
                [providers.validate(v, '--provider')
                 for v in provider_values]
                or providers.default_refs(
                    settings, plan.driver, config_files)))
        except providers.ProviderNeeded as exc:
            plan = dataclasses.replace(plan, provider_needed=exc)
        # report refuses a state file that is not its own: show too.
        ownership_state.read_document(settings.state_file)
        if plan.custom_traits and not settings.state_file:
            LOG.warning('no [DEFAULT] state_path: which custom traits this '
                        'reporter set is not remembered across restarts, so '
                        'one dropped from custom_traits while it is stopped '
                        'stays on the provider')
        if not plan.capabilities.formats and not plan.settings.volume_only:
            LOG.warning(
                'this node boots no image type (%s, excluded: %s): once '
                'the image-type filter is on, nova-scheduler sends it no '
                'image boot at all, only volume-backed ones; if that is '
                'deliberate, say so with [virt_capabilities] volume_only = '
                'True (image-type-filter status then passes the node)',
                plan.capabilities.compute_driver,
                ', '.join(sorted(plan.capabilities.excluded)) or 'nothing')
        return plan

    @property
    def custom_traits(self):
        """The custom traits it keeps."""
        return self.settings.custom_traits | (
            {image_types.VOLUME_ONLY_TRAIT} if self.settings.volume_only
            else frozenset())

    @property
    def owns_image_types(self):
        """Does the reporter keep the COMPUTE_IMAGE_TYPE_* traits? The
        owner rule's one input from the options."""
        return self.settings.image_type_traits_owner == reporter_conf.REPORTER

    @property
    def on_ironic_node(self):
        """Whether the traits are kept on the Ironic node rather than on
        the provider (``ironic_node_traits`` says why)."""
        return self.driver.replaces_provider_traits

    @property
    def host_architecture(self):
        """The host CPU architecture the image-metadata traits depend on:
        the option, else this machine's ``uname -m`` (what libvirt reports
        as the host's). Only the libvirt driver's depend on it, so only
        then is the machine asked."""
        if self.settings.host_architecture:
            return self.settings.host_architecture
        if self.driver.name == drivers.LIBVIRT:
            machine = os.uname().machine
            return (settings_mod.canonical_architecture(machine)
                    or machine.lower())
        return None

    @property
    def driver(self):
        """The driver's record (``drivers.DRIVERS``)."""
        return drivers.DRIVERS[self.capabilities.compute_driver]

    @property
    def metadata_rows(self):
        """The image-metadata traits reported (``metadata_traits`` rows)."""
        if not self.settings.image_metadata_traits:
            return ()
        return self.driver.metadata_rows(self.host_architecture)

    @property
    def metadata_traits(self):
        return frozenset(r.trait for r in self.metadata_rows)

    @property
    def rule(self):
        """The owner rule (``ownership.OwnerRule``)."""
        return ownership.OwnerRule(
            image_types=(self.capabilities.traits if self.owns_image_types
                         else frozenset()),
            owns_image_types=self.owns_image_types,
            custom=self.custom_traits,
            metadata=self.metadata_traits,
            metadata_ownable=self.driver.possible_metadata_traits)

    @property
    def traits(self):
        """Every trait the reporter keeps on the provider."""
        return self.rule.desired

    @property
    def nova_compute_traits(self):
        """The image-type traits nova-compute keeps on this node's
        provider, which this reporter leaves to it."""
        return (frozenset() if self.owns_image_types
                else self.capabilities.traits)

    def why(self):
        """Who keeps each kind of trait on this node, and why: one
        sentence per kind, in the order ``show`` prints them."""
        driver = self.capabilities.compute_driver
        if self.owns_image_types:
            image_type_why = (
                'this reporter keeps them (image_type_traits_owner = '
                'reporter) and removes any other COMPUTE_IMAGE_TYPE_* trait')
        else:
            image_type_why = (
                'nova-compute keeps them (image_type_traits_owner = '
                'nova-compute) and reports them itself; this reporter '
                'never touches one')
        if not self.capabilities.formats:
            image_type_why += (
                '; this node boots no image type (excluded: %s), so once '
                'the filter is on it gets volume-backed boots only%s'
                % (', '.join(sorted(self.capabilities.excluded))
                   or 'nothing',
                   ', as volume_only = True declares' if
                   self.settings.volume_only else ''))
        where = driver + (' on ' + self.host_architecture
                          if self.host_architecture else '')
        if not self.settings.image_metadata_traits:
            metadata = ('none: image_metadata_traits = False (those this '
                        'reporter remembers setting are removed)')
        elif self.metadata_rows:
            metadata = ('this reporter keeps them: %s boots them and '
                        'nova-compute never reports them' % where)
        else:
            metadata = ('none for %s: nova-compute leaves out no '
                        'image-metadata trait it boots' % where)
        sources = (['[virt_capabilities] custom_traits']
                   if self.settings.custom_traits else [])
        if self.settings.volume_only:
            sources.append('%s from volume_only = True, which '
                           'image-type-filter status reads'
                           % image_types.VOLUME_ONLY_TRAIT)
        custom = ('this reporter keeps them: ' + '; '.join(sources)
                  if sources else
                  'none: [virt_capabilities] custom_traits is empty')
        if sources and self.on_ironic_node:
            custom += ('; on the Ironic node, which nova-compute copies to '
                       'the provider (it removes any other trait there)')
        return {'image_type_traits': image_type_why,
                'image_metadata_traits': metadata,
                'custom_traits': custom}
