"""Which disk image formats each Nova virt driver can boot, as Nova decides it.

A table of rules, data first. Only libvirt depends on options, so it alone is a
function. Driver names are spelled as nova.conf spells them; the
``nova.virt.`` prefix is optional, as it is for Nova.
"""

import dataclasses

from image_type_common import exceptions
from image_type_common import image_types
from image_type_common import text
from image_type_common.conf import loading

NOVA_VIRT_PREFIX = 'nova.virt.'
LIBVIRT = 'libvirt.LibvirtDriver'

#: Drivers whose formats depend on no option. Older clouds' drivers included.
STATIC_FORMATS = {
    'vmwareapi.VMwareVCDriver': frozenset({'iso', 'vmdk'}),
    'ironic.IronicDriver': frozenset({'ami', 'qcow2', 'raw'}),
    'zvm.ZVMDriver': frozenset({'raw'}),
    'fake.FakeDriver': frozenset({'raw'}),
    'hyperv.HyperVDriver': frozenset({'vhd', 'vhdx'}),
    'powervm.PowerVMDriver': frozenset({'raw'}),
    'xenapi.XenAPIDriver': frozenset({'raw', 'vdi', 'vhd'}),
}

LIBVIRT_ALWAYS = frozenset({'aki', 'ami', 'ari', 'iso', 'raw'})
#: Image backends that cannot boot qcow2 unless images are forced to raw.
RAW_ONLY_BACKENDS = frozenset({'rbd', 'lvm'})

KNOWN_DRIVERS = tuple(sorted((LIBVIRT, *STATIC_FORMATS)))


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
    if short == LIBVIRT or short in STATIC_FORMATS:
        return short
    raise exceptions.ConfigError(
        'unknown [DEFAULT] compute_driver %r; accepted (with or without the '
        '%r prefix): %s' % (name, NOVA_VIRT_PREFIX, ', '.join(KNOWN_DRIVERS)))


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


def capabilities_from_conf(conf):
    """Work out a node's capabilities from its parsed nova.conf."""
    driver = normalize_driver(loading.read(conf, 'compute_driver'))
    excluded = parse_exclude_list(
        loading.read(conf, 'image_type_exclude_list', 'compute'))
    if driver == LIBVIRT:
        formats = libvirt_formats(
            loading.read(conf, 'images_type', 'libvirt'),
            loading.read(conf, 'virt_type', 'libvirt'),
            loading.read(conf, 'force_raw_images'))
    else:
        formats = STATIC_FORMATS[driver]
    unknown = formats.difference(image_types.FORMATS)
    if unknown:
        # An os-traits older than this table; never report what it lacks.
        formats = formats.difference(unknown)
    return Capabilities(driver, frozenset(formats - excluded), excluded)
