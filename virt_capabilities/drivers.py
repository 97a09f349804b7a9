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

"""Which disk image formats each Nova virt driver can boot, as Nova decides it.

A table of rules, data first, for the drivers of the supported Nova releases
only, each row naming the Nova source it comes from. Only libvirt depends on
options, so it alone is a function. Driver names are spelled as nova.conf
spells them; the ``nova.virt.`` prefix is optional, as it is for Nova.
"""

import dataclasses

from image_type_common import exceptions
from image_type_common import image_types
from image_type_common import text

NOVA_VIRT_PREFIX = 'nova.virt.'
LIBVIRT = 'libvirt.LibvirtDriver'
#: The Nova releases whose drivers this table follows.
SUPPORTED_NOVA = 'Nova 31.0.0 (2025.1) to 34.0.0 (2026.1)'


@dataclasses.dataclass(frozen=True)
class StaticDriver:
    """A driver whose formats depend on no option, and where Nova says so."""

    formats: frozenset
    #: The ``supports_image_type_*`` capabilities in nova 34.0.0.
    source: str


#: Every driver of the supported Nova releases whose formats depend on no
#: option (libvirt's do: ``libvirt_formats``).
STATIC_DRIVERS = {
    'vmwareapi.VMwareVCDriver': StaticDriver(
        frozenset({'iso', 'vmdk'}), 'nova/virt/vmwareapi/driver.py:83-93'),
    'ironic.IronicDriver': StaticDriver(
        frozenset({'ami', 'qcow2', 'raw'}),
        'nova/virt/ironic/driver.py:173-183'),
    'zvm.ZVMDriver': StaticDriver(
        frozenset({'raw'}), 'nova/virt/zvm/driver.py:56-66'),
    # Nova's own test driver, which its functional harness and devstack's
    # fake virt type run.
    'fake.FakeDriver': StaticDriver(
        frozenset({'raw'}), 'nova/virt/fake.py:130-131'),
}

#: The libvirt driver's rules, nova/virt/libvirt/driver.py in 34.0.0:
#: always these (456-460); qcow2 unless the backend is raw-only and images
#: are not forced to raw (436-439, 464); ploop on parallels (440, 465); rbd
#: with force_raw_images off refused at start-up (889-896).
LIBVIRT_ALWAYS = frozenset({'aki', 'ami', 'ari', 'iso', 'raw'})
RAW_ONLY_BACKENDS = frozenset({'rbd', 'lvm'})

#: Drivers older clouds had, in no supported Nova: refused by name.
REMOVED_DRIVERS = frozenset({'hyperv.HyperVDriver', 'powervm.PowerVMDriver',
                             'xenapi.XenAPIDriver'})

KNOWN_DRIVERS = tuple(sorted((LIBVIRT, *STATIC_DRIVERS)))


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What one node can boot, and why: the driver and what was excluded."""

    compute_driver: str
    formats: frozenset
    excluded: frozenset

    @property
    def traits(self):
        return frozenset(image_types.TRAIT_BY_FORMAT[f] for f in self.formats)

    def as_dict(self):
        return {
            'compute_driver': self.compute_driver,
            'formats': sorted(self.formats),
            'traits': sorted(self.traits),
            'excluded': sorted(self.excluded),
        }


def normalize_driver(name):
    """Return the table key for a driver name, or raise ConfigError."""
    if not name:
        raise exceptions.ConfigError(
            '[DEFAULT] compute_driver is not set; accepted: %s'
            % ', '.join(KNOWN_DRIVERS))
    short = name.strip()
    if short.startswith(NOVA_VIRT_PREFIX):
        short = short[len(NOVA_VIRT_PREFIX):]
    if short == LIBVIRT or short in STATIC_DRIVERS:
        return short
    if short in REMOVED_DRIVERS:
        raise exceptions.ConfigError(
            '[DEFAULT] compute_driver %s is in no supported Nova (%s); '
            'accepted: %s' % (text.safe_repr(name), SUPPORTED_NOVA,
                              ', '.join(KNOWN_DRIVERS)))
    raise exceptions.ConfigError(
        'unknown [DEFAULT] compute_driver %s; accepted (with or without the '
        '%r prefix): %s' % (text.safe_repr(name), NOVA_VIRT_PREFIX,
                            ', '.join(KNOWN_DRIVERS)))


def libvirt_formats(images_type, virt_type, force_raw_images):
    """The libvirt driver's formats for its options (Nova's rules)."""
    if images_type == 'rbd' and not force_raw_images:
        raise exceptions.ConfigError(
            '[libvirt] images_type = rbd with [DEFAULT] force_raw_images = '
            'False is refused, as nova-compute refuses it at start-up: Ceph '
            'cannot clone qcow2 images, so they must be converted to raw')
    formats = set(LIBVIRT_ALWAYS)
    if force_raw_images or images_type not in RAW_ONLY_BACKENDS:
        formats.add('qcow2')
    if virt_type == 'parallels':
        formats.add('ploop')
    return frozenset(formats)


def parse_exclude_list(entries):
    """``[compute] image_type_exclude_list``, read exactly as nova-compute.

    nova-compute drops a format only when an entry equals its lower-case
    name (``nova/virt/driver.py`` ``_check_image_type_exclude_list``); any
    other entry excludes nothing. Reporting what the operator meant would
    then fight nova-compute over the trait, and reporting what Nova does
    would silently ignore the operator: such an entry is refused instead.
    """
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
    if driver == LIBVIRT:
        formats = libvirt_formats(settings.images_type, settings.virt_type,
                                  settings.force_raw_images)
    else:
        formats = STATIC_DRIVERS[driver].formats
    unknown = formats.difference(image_types.FORMATS)
    if unknown:
        # An os-traits older than this table; never report what it lacks.
        formats = formats.difference(unknown)
    return Capabilities(driver, frozenset(formats - excluded), excluded)
