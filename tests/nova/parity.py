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

"""The parity table: Nova's image-metadata prefilter and ours, on Nova's code.

For every image-property combination (every value of Nova's own enums for
each property Nova's prefilter reads, Nova's aliases, mixed pairs and
triples, and a few values Nova rejects) this builds the request the way
nova-api does (``objects.ImageMeta.from_dict`` into an
``objects.RequestSpec``), runs Nova's own ``transform_image_metadata`` (with
``[scheduler] image_metadata_prefilter = True``) and ours
(``ImageMetadataPrefilter``, every family, no Placement) on separate
copies, and records ``root_required`` / ``root_forbidden`` of each.

Why they differ is worked out without our code: the name Nova computes for
each property is taken from Nova itself (the trait it adds, or the name it
logs as invalid), each name is looked up in os-traits, and a short list of
known facts (os-traits' own spellings; an x86_64 host boots i686 guests;
ironic and z/VM report no HW_ARCH_* trait) is checked against os-traits and
Nova's own drivers too. From that the rows' expected results are
derived and compared with what both filters really did; a row the facts do
not explain says UNEXPLAINED, and the tests fail on it.

Write the checked-in table again (in a Nova virtualenv)::

    .venv-nova-34.0.0/bin/python -m tests.nova.parity
"""

import dataclasses
import functools
import logging
import os
import sys

from nova import conf as nova_conf
from nova import objects
from nova.objects import image_meta
from nova.scheduler import request_filter as nova_request_filter
import os_traits

from image_type_common import image_metadata
from image_type_common import nova_releases
from image_type_filter import settings
from image_type_filter.scheduler import image_metadata_prefilter
from tests.nova import virt_drivers

CONF = nova_conf.CONF
TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     'image_metadata_parity.md')
REGENERATE_ENV = 'REGENERATE_PARITY'

#: The image properties Nova's prefilter reads (request_filter.py,
#: transform_image_metadata's prefix_map), and the legacy name nova-api
#: turns into one of them (ImageMetaProps._legacy_property_map).
PROPERTIES = ('hw_disk_bus', 'hw_cdrom_bus', 'hw_vif_model',
              'hw_video_model', 'hw_architecture', 'architecture',
              'hw_emulation_architecture', 'hw_viommu_model')
LEGACY = {'architecture': 'hw_architecture'}

#: Spellings nova-api canonicalises (Architecture.canonicalize,
#: VIFModel.LEGACY_VALUES): Nova's filters only ever see the result.
ALIASES = (
    {'hw_architecture': 'i386'}, {'hw_architecture': 'x86_32'},
    {'hw_architecture': 'amd64'}, {'architecture': 'amd64'},
    {'architecture': 'i486'}, {'hw_emulation_architecture': 'amd64'},
    {'hw_vif_model': 'VirtualE1000'}, {'hw_vif_model': 'VirtualVmxnet3'},
)

#: Several properties at once; most with one property os-traits has no
#: trait for (or spells otherwise), which Nova lets drop the others.
MIXED = (
    {'hw_emulation_architecture': 'i686', 'hw_disk_bus': 'scsi'},
    {'hw_emulation_architecture': 'i686', 'hw_cdrom_bus': 'sata'},
    {'hw_emulation_architecture': 'armv7l', 'hw_architecture': 'aarch64'},
    {'hw_emulation_architecture': 'x86_64', 'hw_architecture': 'aarch64'},
    {'hw_viommu_model': 'intel', 'hw_architecture': 'x86_64'},
    {'hw_viommu_model': 'smmuv3', 'hw_architecture': 'aarch64'},
    {'hw_viommu_model': 'virtio', 'hw_disk_bus': 'virtio',
     'hw_vif_model': 'virtio'},
    {'hw_architecture': 'armv7l', 'hw_disk_bus': 'virtio'},
    {'hw_architecture': 'i686', 'hw_disk_bus': 'scsi'},
    {'hw_architecture': 'i686', 'hw_emulation_architecture': 'x86_64'},
    {'hw_architecture': 'i686', 'hw_viommu_model': 'intel'},
    {'architecture': 'aarch64', 'hw_architecture': 'x86_64'},
    {'hw_disk_bus': 'scsi', 'hw_cdrom_bus': 'ide'},
    {'hw_video_model': 'vga', 'hw_vif_model': 'e1000'},
    {'hw_disk_bus': 'scsi', 'hw_cdrom_bus': 'ide', 'hw_vif_model': 'virtio'},
    {'hw_vif_model': 'vmxnet3', 'hw_video_model': 'vmvga',
     'hw_emulation_architecture': 'i686'},
    {'hw_video_model': 'virtio', 'hw_emulation_architecture': 'ppc64',
     'hw_architecture': 'ppc64le'},
)

#: Values Nova's ImageMeta refuses: no filter ever sees them.
REJECTED = (
    {'hw_disk_bus': 'nvme'}, {'hw_architecture': 'arm64'},
    {'hw_emulation_architecture': 'riscv64'}, {'hw_viommu_model': 'smmu'},
)

# -- the facts reasons rest on, each checked against os-traits -----------

#: Nova's computed name -> the os-traits trait for the same thing.
RENAMED = {'HW_ARCH_ARMV7L': 'HW_ARCH_ARMV7'}
#: Nova's computed prefix -> the one os-traits (and Nova's libvirt driver,
#: ``COMPUTE_VIOMMU_MODEL_{model}`` in _get_viommu_model_traits) uses.
RENAMED_PREFIX = {'COMPUTE_VIOMMU_': 'COMPUTE_VIOMMU_MODEL_'}
#: A 32-bit x86 guest boots on an x86_64 host CPU (Nova's VMware driver
#: lists i686 and x86_64 in supported_instances; libvirt on x86_64 too).
I686 = ('hw_architecture', 'i686')
I686_HOSTS = ('HW_ARCH_I686', 'HW_ARCH_X86_64')
#: Drivers that report no HW_ARCH_* trait at all (checked by calling their
#: update_provider_tree on a node of a known architecture);
#: ImagePropertiesFilter checks those hosts' architecture from their
#: supported_instances. So an architecture forbids the others' traits
#: rather than requiring its own, i686 or not.
ARCHLESS_DRIVERS = {'ironic': virt_drivers.ironic, 'z/VM': virt_drivers.zvm}
ARCH_PROPERTY = 'hw_architecture'

SAME, RENAME, WIDER, NO_TRAIT = 'same', 'renamed', 'wider', 'no-trait'
ARCHLESS = 'archless'
UNEXPLAINED = 'UNEXPLAINED'
#: Reason kinds that make a row differ, in the header's order.
KINDS = {
    RENAME: 'os-traits spells the trait otherwise',
    WIDER: 'i686 hosts include x86_64',
    ARCHLESS: 'hosts with no HW_ARCH_\\* trait are left to '
              'ImagePropertiesFilter',
    'drops-all': 'Nova adds none of the image\'s traits',
}
ALL_TRAITS = frozenset(os_traits.get_traits())


def in_os_traits(name):
    """Nova asks ``hasattr(os_traits, name)``; the list is the truth.

    Both must agree for the trait names at stake here.
    """
    listed = name in ALL_TRAITS
    if listed != hasattr(os_traits, name):
        raise AssertionError('os-traits disagrees with itself on %s' % name)
    return listed


@dataclasses.dataclass(frozen=True)
class Fact:
    """What one image property asks, worked out without our code."""

    prop: str
    value: str
    #: The name Nova computes, from Nova itself.
    nova_name: str
    nova_valid: bool
    kind: str
    #: What ours should require / forbid for it.
    required: frozenset = frozenset()
    forbidden: frozenset = frozenset()
    #: An architecture: hosts without any HW_ARCH_* trait may take it.
    archless: bool = False
    #: The os-traits trait for the value, where there is one.
    trait: str = None


@dataclasses.dataclass
class Row:
    given: dict
    reads: dict = None
    rejected: str = None
    nova_required: frozenset = frozenset()
    ours_required: frozenset = frozenset()
    ours_forbidden: frozenset = frozenset()
    reasons: list = dataclasses.field(default_factory=list)

    @property
    def identical(self):
        return (self.nova_required == self.ours_required
                and not self.ours_forbidden)

    @property
    def kinds(self):
        return [kind for kind, _ in self.reasons]


# -- running Nova's and ours ---------------------------------------------

class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def nova_spec(properties):
    """The request nova-api builds for an image with these properties."""
    objects.register_all()
    return objects.RequestSpec(image=objects.ImageMeta.from_dict(
        {'disk_format': 'raw', 'container_format': 'bare',
         'properties': dict(properties)}))


def run_novas(properties):
    """Nova's own prefilter on a fresh request: (root_required, the names
    it logged as invalid)."""
    spec = nova_spec(properties)
    logger = logging.getLogger(nova_request_filter.__name__)
    handler = _Records()
    logger.addHandler(handler)
    # Turned on only if it is off, and back off after: inside Nova's
    # harness a test may have turned it on for nova-scheduler already.
    turn_on = not CONF.scheduler.image_metadata_prefilter
    if turn_on:
        CONF.set_override('image_metadata_prefilter', True,
                          group='scheduler')
    try:
        nova_request_filter.transform_image_metadata(None, spec)
    finally:
        if turn_on:
            CONF.clear_override('image_metadata_prefilter',
                                group='scheduler')
        logger.removeHandler(handler)
    invalid = [r.args[0] for r in handler.records
               if r.levelno >= logging.ERROR and r.args
               and 'not valid' in str(r.msg)]
    return frozenset(spec.root_required), invalid


@functools.cache
def _ours():
    return image_metadata_prefilter.ImageMetadataPrefilter(
        settings.FilterSettings.defaults(image_metadata_families=image_metadata.NAMES))


def run_ours(properties):
    """Ours, every family on, no Placement, on a fresh request."""
    spec = nova_spec(properties)
    _ours()(None, spec)
    return frozenset(spec.root_required), frozenset(spec.root_forbidden)


def reads(properties):
    """The properties as Nova's ImageMetaProps holds them (canonical)."""
    props = nova_spec(properties).image.properties
    found = {}
    for name in PROPERTIES:
        name = LEGACY.get(name, name)
        if name in props.fields and props.obj_attr_is_set(name):
            found[name] = getattr(props, name)
    return found


@functools.cache
def fact(prop, value):
    """Nova's name for one canonical property, and what it means."""
    required, invalid = run_novas({prop: value})
    if required:
        (name,) = required
        valid = True
    elif len(invalid) == 1:
        name, valid = invalid[0], False
    else:
        raise AssertionError('Nova neither added nor refused a trait for '
                             '%s=%s' % (prop, value))
    if valid != in_os_traits(name):
        raise AssertionError('Nova and os-traits disagree on %s' % name)
    if (prop, value) == I686:
        if not (valid and all(in_os_traits(t) for t in I686_HOSTS)):
            raise AssertionError('os-traits lacks %s' % (I686_HOSTS,))
        return _architecture(Fact(prop, value, name, valid, WIDER),
                             I686_HOSTS)
    if valid:
        return _architecture(Fact(prop, value, name, valid, SAME,
                                  required={name}, trait=name))
    renamed = RENAMED.get(name)
    for wrong, right in RENAMED_PREFIX.items():
        if renamed is None and name.startswith(wrong):
            renamed = right + name[len(wrong):]
    if renamed is not None and in_os_traits(renamed):
        return _architecture(Fact(prop, value, name, valid, RENAME,
                                  required={renamed}, trait=renamed))
    return Fact(prop, value, name, valid, NO_TRAIT)


@functools.cache
def archless_drivers():
    """The fact behind ARCHLESS, from Nova's own drivers: their
    update_provider_tree, called as the resource tracker calls it (an
    Ironic node whose cpu_arch is x86_64), leaves no HW_ARCH_* trait."""
    for name, driver in ARCHLESS_DRIVERS.items():
        arch = {t for t in virt_drivers.traits_after_update(driver())
                if t.startswith('HW_ARCH_')}
        if arch:
            raise AssertionError('%s reports %s now' % (
                name, ', '.join(sorted(arch))))
    return True


def _architecture(fact, hosts=None):
    """An architecture's fact: the other HW_ARCH_* traits forbidden,
    none required, since archless hosts may take it."""
    if fact.prop != ARCH_PROPERTY or not archless_drivers():
        return fact
    hosts = set(hosts or {fact.trait})
    arch = frozenset(os_traits.get_traits(prefix='HW_ARCH_'))
    return dataclasses.replace(fact, required=frozenset(),
                               forbidden=arch - hosts, archless=True)


def compare(given):
    """One row of the table."""
    row = Row(dict(given))
    try:
        row.reads = reads(given)
    except (ValueError, TypeError) as exc:
        row.rejected = '%s: %s' % (type(exc).__name__, exc)
        return row
    row.nova_required, _ = run_novas(given)
    row.ours_required, row.ours_forbidden = run_ours(given)

    facts = [fact(p, v) for p, v in row.reads.items()]
    nova_names = [f.nova_name for f in facts]
    invalid = [f.nova_name for f in facts if not f.nova_valid]
    expect_nova = frozenset() if invalid else frozenset(nova_names)
    expect_required = frozenset().union(*(f.required for f in facts))
    expect_forbidden = frozenset().union(*(f.forbidden for f in facts))

    for f in facts:
        if f.kind == RENAME:
            right = f.trait
            row.reasons.append((RENAME, 'os-traits spells it %s (Nova '
                                'computes %s, not in os-traits)'
                                % (right, f.nova_name)))
        elif f.kind == WIDER:
            row.reasons.append((WIDER, 'i686 hosts include x86_64: Nova '
                                'requires HW_ARCH_I686, ours forbids the '
                                'other HW_ARCH_\\*'))
        if f.archless:
            row.reasons.append((ARCHLESS, 'ironic and z/VM report no '
                                'HW_ARCH_\\*: ours forbids the other '
                                'architectures instead of requiring one'))
    dropped = sorted(n for n in nova_names if n in ALL_TRAITS)
    if invalid and dropped:
        row.reasons.append(('drops-all', "Nova's computed name %s is not in "
                            'os-traits: Nova adds none of the %d traits it '
                            'computes (not even %s)' % (
                                ', '.join(invalid), len(nova_names),
                                ', '.join(dropped))))
    if row.identical:
        row.reasons.extend(
            (NO_TRAIT, 'no os-traits trait %s: no constraint' % f.nova_name)
            for f in facts if f.kind == NO_TRAIT)

    wrong = []
    if row.nova_required != expect_nova:
        wrong.append('Nova required %s, expected %s' % (
            sorted(row.nova_required), sorted(expect_nova)))
    if (row.ours_required, row.ours_forbidden) != (expect_required,
                                                   expect_forbidden):
        wrong.append('ours required %s forbade %s, expected %s and %s' % (
            sorted(row.ours_required), sorted(row.ours_forbidden),
            sorted(expect_required), sorted(expect_forbidden)))
    if row.identical == any(k in KINDS for k in row.kinds):
        wrong.append('the reasons do not match the difference')
    if wrong:
        row.reasons.append((UNEXPLAINED, '; '.join(wrong)))
    return row


# -- the combinations ----------------------------------------------------

def enum_values(prop):
    """Every value Nova accepts for ``prop``: its own enum's ALL."""
    field = image_meta.ImageMetaProps.fields[LEGACY.get(prop, prop)]
    return tuple(field._type.ALL)


def combinations():
    singles = [{prop: value} for prop in PROPERTIES
               for value in enum_values(prop)]
    return singles, list(ALIASES), list(MIXED), list(REJECTED)


@functools.cache
def rows():
    return tuple(compare(given) for group in combinations()
                 for given in group)


# -- the Markdown --------------------------------------------------------

def _props(properties):
    return ', '.join('%s=%s' % kv for kv in properties.items())


def _traits(traits):
    if not traits:
        return '-'
    arch = set(os_traits.get_traits(prefix='HW_ARCH_'))
    if set(traits) <= arch and len(traits) > len(arch) / 2:
        return 'every HW_ARCH_\\* but %s (%d traits)' % (
            ', '.join(sorted(arch - set(traits))), len(traits))
    return ', '.join(sorted(traits))


def render():
    singles, aliases, mixed, rejected = combinations()
    all_rows = rows()
    compared = [r for r in all_rows if not r.rejected]
    refused = [r for r in all_rows if r.rejected]
    same = [r for r in compared if r.identical]
    differ = [r for r in compared if not r.identical]
    lines = [
        '# Image-metadata prefilter: parity with Nova\'s own',
        '',
        'Generated by `tests/nova/parity.py` from Nova\'s own code: each '
        'image below goes through `objects.ImageMeta.from_dict` into an '
        '`objects.RequestSpec`, then Nova\'s '
        '`request_filter.transform_image_metadata` (`[scheduler] '
        'image_metadata_prefilter = True`) and ours '
        '(`ImageMetadataPrefilter`, every family, no Placement) run on '
        'separate copies. Reasons come from the name Nova computes (taken '
        'from Nova itself) looked up in os-traits, two facts checked '
        'against os-traits (its own spellings of vIOMMU models and ARMv7; '
        'an x86_64 host boots i686 guests) and one against Nova\'s drivers '
        '(ironic and z/VM report no HW_ARCH_\\* trait), never from our code. '
        'What they predict is compared with what both filters did; a row '
        'they do not explain would say UNEXPLAINED. '
        '`tests/nova/test_image_metadata_parity.py` fails when a fresh '
        'table differs from this file. The same table holds for every Nova '
        'release tox.ini pins (%s, with os-traits 3.9.0).'
        % nova_releases.TESTED,
        '',
        'Regenerate, in a Nova virtualenv: `REGENERATE_PARITY=1 '
        '.venv-nova-%(newest)s/bin/python -m pytest -q -p no:cacheprovider '
        'tests/nova/test_image_metadata_parity.py` or '
        '`.venv-nova-%(newest)s/bin/python -m tests.nova.parity`.'
        % {'newest': nova_releases.NEWEST.version},
        '',
        '- Combinations: %d (%d single values from Nova\'s enums, %d '
        'aliases, %d mixed, %d invalid)' % (
            len(all_rows), len(singles), len(aliases), len(mixed),
            len(rejected)),
        '- Rejected by Nova\'s ImageMeta.from_dict: %d' % len(refused),
        '- Identical: %d (%d of them: no os-traits trait, neither adds a '
        'constraint)' % (len(same),
                         sum(1 for r in same if NO_TRAIT in r.kinds)),
        '- Differing: %d, by reason (a row may have several):' % len(differ),
    ]
    for kind, title in KINDS.items():
        lines.append('  - %s: %d' % (title, sum(
            1 for r in differ if kind in r.kinds)))
    lines.append('- Unexplained: %d' % sum(
        1 for r in all_rows if UNEXPLAINED in r.kinds))
    lines += [
        '',
        '## Compared',
        '',
        '| # | Image properties | Nova requires | Ours requires | '
        'Ours forbids | Why they differ |',
        '|---|---|---|---|---|---|',
    ]
    for number, row in enumerate(compared, 1):
        shown = _props(row.given)
        if row.reads != row.given:
            shown += ' (Nova reads %s)' % _props(row.reads)
        why = '; '.join(text for _, text in row.reasons)
        if row.identical:
            why = 'identical' + (': ' + why if why else '')
        lines.append('| %d | %s | %s | %s | %s | %s |' % (
            number, shown, _traits(row.nova_required),
            _traits(row.ours_required), _traits(row.ours_forbidden), why))
    lines += ['', '## Rejected by Nova', '',
              '| Image properties | Nova\'s error |', '|---|---|']
    for row in refused:
        lines.append('| %s | %s |' % (_props(row.given), row.rejected))
    return '\n'.join(lines) + '\n'


def read_table():
    with open(TABLE) as f:
        return f.read()


def write_table(text=None):
    with open(TABLE, 'w') as f:
        f.write(render() if text is None else text)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    # Ours warns once per value with no trait; the table says it already.
    logging.getLogger('image_type_filter').setLevel(logging.ERROR)
    text = render()
    if '--check' in argv:
        return 0 if os.path.exists(TABLE) and read_table() == text else 1
    write_table(text)
    print('wrote %s' % TABLE)
    return 0


if __name__ == '__main__':
    sys.exit(main())
