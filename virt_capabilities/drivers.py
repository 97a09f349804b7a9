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

"""Each Nova virt driver, as the reporter needs to know it: one record.

The drivers of the supported Nova releases, each fact naming its Nova
34.0.0 source; names as nova.conf spells them (``nova.virt.`` optional).
"""

import dataclasses
import typing

from image_type_common import exceptions
from image_type_common import image_types
from image_type_common import nova_releases
from image_type_common import text
from virt_capabilities import metadata_traits
from virt_capabilities import providers

NOVA_VIRT_PREFIX = 'nova.virt.'
LIBVIRT = 'libvirt.LibvirtDriver'


@dataclasses.dataclass(frozen=True)
class Driver:
    """One driver: every fact about it the reporter uses."""

    name: str
    #: The formats it boots (the ``supports_image_type_*`` capabilities that
    #: are True): a set, or where they depend on the options (libvirt) a
    #: function of the NodeSettings.
    formats: typing.Union[frozenset, typing.Callable]
    #: Where Nova 34.0.0 says so.
    formats_source: str
    #: How nova-compute names its node, and so its provider, without a
    #: compute_id file: ``node_name(settings)``, and where that comes from;
    #: None when only the hypervisor knows (``named_by_hypervisor`` says how).
    node_name: typing.Callable = None
    node_name_source: str = None
    named_by_hypervisor: str = None
    #: The image-metadata traits it boots but nova-compute never writes:
    #: ``metadata_traits`` rows by host CPU architecture (``uname -m``),
    #: ``None`` for rows of every host.
    metadata_rows_by_machine: dict = dataclasses.field(default_factory=dict)
    #: Whether nova-compute's driver replaces the provider's whole trait
    #: set on every update (ironic's alone; why, and what the reporter
    #: does there: doc/source/admin/trait-ownership.rst). Where:
    #: ``update_provider_tree`` in Nova 34.0.0 and (in brackets) 31.0.0,
    #: whose lines ``tests/nova`` checks, and what it does to traits.
    replaces_provider_traits: bool = False
    replaces_source: str = ''

    def metadata_rows(self, machine):
        """The rows a node of this driver on a host of CPU architecture
        ``machine`` reports."""
        return (self.metadata_rows_by_machine.get(None, ()) +
                self.metadata_rows_by_machine.get((machine or '').lower(), ()))

    @property
    def possible_metadata_traits(self):
        """Every image-metadata trait this driver's node could report, on
        any host: what the reporter may own on its provider (and remove,
        once it set one). Nothing else, so a libvirt node never touches a
        storage bus."""
        return frozenset(r.trait for rows in
                         self.metadata_rows_by_machine.values()
                         for r in rows)


#: The libvirt driver's rules, nova/virt/libvirt/driver.py in 34.0.0:
#: always these (456-460); qcow2 unless the backend is raw-only and images
#: are not forced to raw (436-439, 464); ploop on parallels (440, 465); rbd
#: with force_raw_images off refused at start-up (889-896).
LIBVIRT_ALWAYS = frozenset({'aki', 'ami', 'ari', 'iso', 'raw'})
RAW_ONLY_BACKENDS = frozenset({'rbd', 'lvm'})


def libvirt_formats(settings):
    """The libvirt driver's formats for its options (Nova's rules)."""
    if settings.images_type == 'rbd' and not settings.force_raw_images:
        raise exceptions.ConfigError(
            '[libvirt] images_type = rbd with [DEFAULT] force_raw_images = '
            'False is refused, as nova-compute refuses it at start-up: Ceph '
            'cannot clone qcow2 images, so they must be converted to raw')
    formats = set(LIBVIRT_ALWAYS)
    if (settings.force_raw_images
            or settings.images_type not in RAW_ONLY_BACKENDS):
        formats.add('qcow2')
    if settings.virt_type == 'parallels':
        formats.add('ploop')
    return frozenset(formats)


#: Every driver here but ironic: the resource tracker keeps the traits
#: it does not own (nova/compute/resource_tracker.py:1335-1352; the
#: table: doc/source/admin/trait-ownership.rst).
_KEEPS_OTHERS = 'only adds or removes its own traits'

#: Every driver of the supported Nova releases.
DRIVERS = {d.name: d for d in (
    Driver(
        LIBVIRT, formats=libvirt_formats,
        formats_source='nova/virt/libvirt/driver.py:436-465, 889-896',
        node_name=lambda settings: providers.libvirt_hostname(),
        node_name_source='this machine\'s hostname, by libvirt\'s rule',
        metadata_rows_by_machine=metadata_traits.LIBVIRT_ROWS_BY_MACHINE,
        replaces_source='nova/virt/libvirt/driver.py:9796-9939 (31.0.0: '
                        '9403-9554): ' + _KEEPS_OTHERS),
    Driver(
        'vmwareapi.VMwareVCDriver', frozenset({'iso', 'vmdk'}),
        'nova/virt/vmwareapi/driver.py:83-93',
        named_by_hypervisor='VMware names it <cluster moref>.<vCenter uuid>',
        metadata_rows_by_machine={None: metadata_traits.VMWARE_ROWS},
        replaces_source='nova/virt/vmwareapi/driver.py:432-539 (31.0.0: '
                        '431-538): ' + _KEEPS_OTHERS),
    Driver(
        'ironic.IronicDriver', frozenset({'ami', 'qcow2', 'raw'}),
        'nova/virt/ironic/driver.py:173-183',
        named_by_hypervisor='ironic has one per Ironic node, named by the '
                            'node uuid',
        replaces_provider_traits=True,
        replaces_source='nova/virt/ironic/driver.py:874-964 (31.0.0: '
                        '871-961): the provider\'s '
                        'traits become the Ironic node\'s'),
    Driver(
        'zvm.ZVMDriver', frozenset({'raw'}), 'nova/virt/zvm/driver.py:56-66',
        named_by_hypervisor='z/VM names it after the hostname its cloud '
                            'connector reports',
        replaces_source='nova/virt/zvm/driver.py:424-457 (31.0.0: '
                        '424-457): sets no trait'),
    # Nova's own test driver, which its functional harness and devstack's
    # fake virt type run, and its single-node form (the same capabilities
    # and provider tree): that one keeps its node's uuid in state_path's
    # compute_id as a real driver does, so the node survives a restart;
    # FakeDriver's is new in every process, and nova-compute refuses to
    # start again on it. The gate cloud's fake nodes run it, for its
    # upgrade restarts them.
    *(Driver(
        name, frozenset({'raw'}), 'nova/virt/fake.py:130-131',
        node_name=lambda settings: settings.host,
        node_name_source='[DEFAULT] host',
        replaces_source='nova/virt/fake.py:541-574 (31.0.0: 537-570): '
                        'sets no trait')
      for name in ('fake.FakeDriver', 'fake.FakeDriverWithoutFakeNodes')),
)}

#: Drivers older clouds had, in no supported Nova: refused by name.
REMOVED_DRIVERS = frozenset({'hyperv.HyperVDriver', 'powervm.PowerVMDriver',
                             'xenapi.XenAPIDriver'})

KNOWN_DRIVERS = tuple(sorted(DRIVERS))


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What one node can boot, and why: the driver and what was excluded."""

    compute_driver: str
    formats: frozenset
    excluded: frozenset

    @property
    def traits(self):
        return frozenset(image_types.TRAIT_BY_FORMAT[f] for f in self.formats)


def normalize_driver(name):
    """Return the table key for a driver name, or raise ConfigError."""
    accepted = ', '.join(KNOWN_DRIVERS)
    if not name:
        raise exceptions.ConfigError(
            '[DEFAULT] compute_driver is not set; accepted: %s' % accepted)
    short = name.strip().removeprefix(NOVA_VIRT_PREFIX)
    if short in DRIVERS:
        return short
    if short in REMOVED_DRIVERS:
        raise exceptions.ConfigError(
            '[DEFAULT] compute_driver %s is in no supported Nova (%s); '
            'accepted: %s' % (text.safe_repr(name), nova_releases.SUPPORTED,
                              accepted))
    raise exceptions.ConfigError(
        'unknown [DEFAULT] compute_driver %s; accepted (with or without the '
        '%r prefix): %s' % (text.safe_repr(name), NOVA_VIRT_PREFIX,
                            accepted))


def parse_exclude_list(entries):
    """``[compute] image_type_exclude_list``, read exactly as nova-compute
    (``nova/virt/driver.py`` ``_check_image_type_exclude_list``), which
    drops a format only for its exact lower-case name: any other entry is
    refused, rather than fight nova-compute or ignore the operator."""
    excluded = set()
    for entry in entries:
        if entry in image_types.FORMATS:
            excluded.add(entry)
        elif entry.strip().lower() in image_types.FORMATS:
            raise exceptions.ConfigError(
                '[compute] image_type_exclude_list: %s excludes nothing for '
                'nova-compute, which compares exactly; write %r'
                % (text.safe_repr(entry), entry.strip().lower()))
        else:
            raise exceptions.ConfigError(
                '[compute] image_type_exclude_list: %s is no image type; '
                'nova-compute would exclude nothing. Known: %s'
                % (text.safe_repr(entry), ', '.join(image_types.FORMATS)))
    return frozenset(excluded)


def capabilities(settings):
    """Work out a node's capabilities from its NodeSettings."""
    driver = normalize_driver(settings.compute_driver)
    excluded = parse_exclude_list(settings.image_type_exclude_list)
    formats = DRIVERS[driver].formats
    if callable(formats):
        formats = formats(settings)
    return Capabilities(driver, formats - excluded, excluded)
