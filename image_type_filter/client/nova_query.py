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

"""nova-scheduler's ``GET /allocation_candidates`` query, rebuilt without Nova.

What ``nova.scheduler.utils.ResourceRequest.from_request_spec`` and
``resources_from_request_spec`` make of a flavor, an image and what the
request filters left in the RequestSpec (``nova_request_filters``), step by
step in Nova's order, for every supported Nova (``RELEASES``), with where
each term of the query came from:

- the flavor's ``resources[S]:CLASS`` and ``trait[S]:NAME`` extra specs
  (``trait_grammar``) and ``group_policy``; the image's ``trait:NAME``;
- ``hw:cpu_policy`` (``dedicated``: PCPU instead of VCPU; ``mixed``: both,
  from ``hw:cpu_dedicated_mask`` or the realtime mask),
  ``hw:emulator_threads_policy=isolate`` (one PCPU more) and
  ``hw:cpu_thread_policy`` (``HW_CPU_HYPERTHREADING`` required or
  forbidden), flavor or image;
- VCPU, MEMORY_MB and DISK_GB from the flavor unless an extra spec set them
  (DISK_GB: ephemeral, swap rounded up to GB, and the root disk unless the
  server boots from a volume);
- memory encryption (``MEM_ENCRYPTION_CONTEXT``, and from Nova 32 the CPU
  trait of the model), ``hw:pmem`` (``CUSTOM_PMEM_NAMESPACE_*``), vTPM
  (model and version traits), PCI NUMA affinity ``socket``, secure boot
  ``required``, ``hw:maxphysaddr_mode`` and stateless firmware, each as
  Nova turns it into a resource or a trait;
- the request filters' root traits and aggregates (``member_of``);
- ``limit`` (``[scheduler] max_placement_results``), dropped when the
  server is in a server group, as Nova drops it for its hints;
- for ``hw:cpu_policy=dedicated``, the fallback query nova-scheduler sends
  too (VCPU instead of PCPU, ``build(..., pinning=False)``), whose hosts
  it adds to the first's.

Not covered, and said so by ``NOT_COVERED``: request groups from outside
the flavor and image (Neutron ports with QoS minimum bandwidth or packet
rate, Cyborg device profiles, PCI devices in Placement), a requested
destination host or node (``in_tree``), and the ``same_host`` /
``different_host`` hints (which drop ``limit``).

Image properties are read as Nova's ImageMetaProps holds them: legacy names
mapped, booleans and enums coerced; a value Nova refuses, and a flavor and
image that conflict, raise NovaRefuses with Nova's reason (nova-api refuses
such a boot). Pure: no I/O, no logging. tests/nova compares every answer
with Nova's own ``ResourceRequest`` on both ends of the range.
"""

import dataclasses
import math
import re
from urllib import parse

from image_type_common import exceptions
from image_type_common import image_metadata
from image_type_common import nova_releases
from image_type_filter.scheduler import trait_grammar

#: The Nova releases this module rebuilds (major versions): every one
#: supported; each table below keyed by release has a row for each.
RELEASES = nova_releases.MAJORS
OLDEST, NEWEST = RELEASES[0], RELEASES[-1]

#: Request groups and parameters this module does not rebuild.
NOT_COVERED = (
    'request groups from Neutron ports (QoS minimum bandwidth or packet '
    'rate), Cyborg device profiles (accel:device_profile) and PCI devices '
    'in Placement ([filter_scheduler] pci_in_placement)',
    'a requested destination host or node (in_tree)',
    'the same_host and different_host scheduler hints (Nova then sends no '
    'limit)',
)

VCPU, PCPU, MEMORY_MB, DISK_GB = 'VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB'
MEM_ENCRYPTION_CONTEXT = 'MEM_ENCRYPTION_CONTEXT'
CUSTOM = 'CUSTOM_'
GROUP_POLICIES = ('none', 'isolate')

# nova/objects/fields.py, the values Nova accepts.
CPU_POLICIES = ('dedicated', 'shared', 'mixed')
CPU_THREAD_POLICIES = ('prefer', 'isolate', 'require')
EMULATOR_THREADS_POLICIES = ('share', 'isolate')
TPM_VERSIONS = ('1.2', '2.0')
TPM_MODELS = ('tpm-tis', 'tpm-crb')
SECURE_BOOT = ('required', 'disabled', 'optional')
MAXPHYSADDR_MODES = ('passthrough', 'emulate')
PCI_NUMA_POLICIES = ('required', 'legacy', 'preferred', 'socket')
FIRMWARE_TYPES = ('uefi', 'bios')
EPHEMERAL_ENCRYPTION_FORMATS = ('plain', 'luks', 'luksv2')
SOUND_MODELS = ('sb16', 'es1370', 'pcspk', 'ac97', 'ich6', 'ich9', 'usb',
                'virtio')
#: The memory encryption models and their CPU trait, per release
#: (hardware.MemEncryptionConfig*: Nova 31 requires no trait; 32 and 33
#: AMD SEV and SEV-ES; 34 also SEV-SNP and Intel TDX).
MEM_ENCRYPTION_TRAITS = {
    31: {},
    32: {'amd-sev': 'HW_CPU_X86_AMD_SEV',
         'amd-sev-es': 'HW_CPU_X86_AMD_SEV_ES'},
    33: {'amd-sev': 'HW_CPU_X86_AMD_SEV',
         'amd-sev-es': 'HW_CPU_X86_AMD_SEV_ES'},
    34: {'amd-sev': 'HW_CPU_X86_AMD_SEV',
         'amd-sev-es': 'HW_CPU_X86_AMD_SEV_ES',
         'amd-sev-snp': 'HW_CPU_X86_AMD_SEV_SNP',
         'intel-tdx': 'HW_CPU_X86_INTEL_TDX'},
}
#: Models that need hw_firmware_stateless (Nova 34), and a video-less guest.
STATELESS_MODELS = ('amd-sev-snp', 'intel-tdx')
NO_VIDEO_MODELS = ('intel-tdx',)

#: oslo_utils.strutils.TRUE_STRINGS: what FlexibleBooleanField reads as True.
TRUE_STRINGS = ('1', 't', 'true', 'on', 'y', 'yes')

#: The ImageMetaProps fields read here, with the values Nova accepts (a
#: tuple), bool (a FlexibleBooleanField) or str; and the first release
#: with the field (Nova drops the property before that).
IMAGE_FIELDS = {
    'hw_cpu_policy': (CPU_POLICIES, OLDEST),
    'hw_cpu_thread_policy': (CPU_THREAD_POLICIES, OLDEST),
    'hw_cpu_realtime_mask': (str, OLDEST),
    'hw_mem_encryption': (bool, OLDEST),
    'hw_mem_encryption_model': (tuple(MEM_ENCRYPTION_TRAITS[NEWEST]), 32),
    'hw_machine_type': (str, OLDEST),
    'hw_firmware_type': (FIRMWARE_TYPES, OLDEST),
    'hw_firmware_stateless': (bool, OLDEST),
    'hw_tpm_version': (TPM_VERSIONS, OLDEST),
    'hw_tpm_model': (TPM_MODELS, OLDEST),
    'hw_pci_numa_affinity_policy': (PCI_NUMA_POLICIES, OLDEST),
    'os_secure_boot': (SECURE_BOOT, OLDEST),
    'hw_maxphysaddr_mode': (MAXPHYSADDR_MODES, OLDEST),
    'hw_virtio_packed_ring': (bool, OLDEST),
    'hw_ephemeral_encryption': (bool, OLDEST),
    'hw_ephemeral_encryption_format': (EPHEMERAL_ENCRYPTION_FORMATS, OLDEST),
    'hw_sound_model': (SOUND_MODELS, 32),
}


class NovaRefuses(exceptions.ConfigError):
    """nova-api would refuse this boot (a conflict between flavor and
    image, a value Nova does not accept): no query is sent."""


def bool_from_string(value):
    """oslo_utils.strutils.bool_from_string, not strict."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in TRUE_STRINGS


def _int(value, what):
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        raise exceptions.ConfigError(
            '%s is not a whole number: %r' % (what, value)) from None


@dataclasses.dataclass
class Flavor:
    name: str
    vcpus: int
    memory_mb: int
    root_gb: int
    ephemeral_gb: int = 0
    swap: int = 0
    extra_specs: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def from_api(cls, flavor):
        """From compute API JSON: a server's embedded flavor (2.47 and
        later: ``original_name``, ``ram``, ``disk``, ``ephemeral``) or a
        flavor of its own (``name``, ``OS-FLV-EXT-DATA:ephemeral``); swap
        is ``""`` for none in older answers."""
        return cls(
            name=flavor.get('original_name') or flavor.get('name') or '',
            vcpus=_int(flavor.get('vcpus'), 'flavor vcpus'),
            memory_mb=_int(flavor.get('ram'), 'flavor ram'),
            root_gb=_int(flavor.get('disk'), 'flavor disk'),
            ephemeral_gb=_int(flavor.get(
                'ephemeral', flavor.get('OS-FLV-EXT-DATA:ephemeral')),
                'flavor ephemeral'),
            swap=_int(flavor.get('swap'), 'flavor swap'),
            extra_specs=dict(flavor.get('extra_specs') or {}))


@dataclasses.dataclass
class Image:
    """An image as Nova's ImageMeta has it: Glance's properties apart."""

    id: str = None
    name: str = None
    disk_format: str = None
    properties: dict = dataclasses.field(default_factory=dict)


class ImageProps:
    """The image properties as Nova's ImageMetaProps holds them.

    Legacy names are read as their current ones (the current name wins),
    ``trait:X=required`` becomes ``traits_required``, and the fields this
    module reads are coerced as Nova coerces them; a value Nova refuses
    raises NovaRefuses. ``get`` answers None for a property that is not
    set or that Nova drops.
    """

    def __init__(self, properties, release=NEWEST):
        raw = dict(properties or {})
        merged = {}
        for legacy, current in image_metadata.LEGACY_PROPERTIES.items():
            if legacy in raw:
                merged[current] = raw[legacy]
        adapter = raw.get(image_metadata.VMWARE_ADAPTERTYPE)
        if adapter:
            merged['hw_disk_bus'] = 'ide' if adapter == 'ide' else 'scsi'
        merged.update(raw)
        self._values = {}
        for name, value in merged.items():
            if name in IMAGE_FIELDS:
                accepted, since = IMAGE_FIELDS[name]
                if release < since:
                    continue  # no such field yet: Nova drops it
                value = _coerce(name, value, accepted)
            self._values[name] = value
        self.traits_required = sorted(
            trait_grammar.image_required_traits(raw))

    def get(self, name):
        return self._values.get(name)

    def __contains__(self, name):
        return name in self._values


def _coerce(name, value, accepted):
    if accepted is bool:
        return bool_from_string(value)
    if accepted is str:
        return str(value)
    if value not in accepted:
        raise NovaRefuses('Nova refuses the image: %s=%s is not one of %s'
                          % (name, value, ', '.join(accepted)))
    return value


@dataclasses.dataclass
class Group:
    """One request group (``suffix`` None: the unsuffixed one)."""

    suffix: str = None
    resources: dict = dataclasses.field(default_factory=dict)
    required: set = dataclasses.field(default_factory=set)
    forbidden: set = dataclasses.field(default_factory=set)
    member_of: list = dataclasses.field(default_factory=list)
    forbidden_aggregates: set = dataclasses.field(default_factory=set)

    def is_empty(self):
        return not (self.resources or self.required or self.forbidden or
                    self.member_of or self.forbidden_aggregates)

    def params(self):
        """RequestGroup.to_queryparams."""
        suffix = self.suffix or ''
        params = [('resources' + suffix, ','.join(sorted(
            '%s:%s' % kv for kv in self.resources.items())))]
        traits = ','.join(sorted(self.required) +
                          ['!' + t for t in sorted(self.forbidden)])
        if traits:
            params.append(('required' + suffix, traits))
        params.extend(sorted(('member_of' + suffix,
                              'in:' + ','.join(sorted(aggs)))
                             for aggs in self.member_of))
        if self.forbidden_aggregates:
            params.append(('member_of' + suffix, '!in:' + ','.join(
                sorted(self.forbidden_aggregates))))
        return params


@dataclasses.dataclass
class Request:
    """What the request filters read and change: Nova's RequestSpec, in
    the fields this module covers. ``why`` keeps, for each term the query
    will carry, the sources that asked for it."""

    flavor: Flavor
    image: Image = None
    is_bfv: bool = False
    project_id: str = None
    availability_zone: str = None
    #: The server is in a server group (its "group" hint drops limit).
    in_server_group: bool = False
    release: int = NEWEST
    root_required: set = dataclasses.field(default_factory=set)
    root_forbidden: set = dataclasses.field(default_factory=set)
    #: requested_destination.aggregates: each entry 'a,b' (any of them).
    aggregates: list = dataclasses.field(default_factory=list)
    forbidden_aggregates: set = dataclasses.field(default_factory=set)
    why: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.props = ImageProps(
            self.image.properties if self.image else {}, self.release)

    def because(self, param, value, source):
        sources = self.why.setdefault((param, value), [])
        if source not in sources:
            sources.append(source)


@dataclasses.dataclass
class Query:
    """The query as nova-scheduler sends it."""

    groups: dict
    root_required: set
    root_forbidden: set
    group_policy: str = None
    limit: int = None
    why: dict = dataclasses.field(default_factory=dict)
    #: hw:cpu_policy=dedicated turned VCPU into PCPU: nova-scheduler also
    #: asks the fallback query (``build(..., pinning=False)``) and offers
    #: the hosts of both.
    cpu_pinning_requested: bool = False

    def params(self):
        """(key, value) pairs, sorted: ResourceRequest.to_querystring."""
        params = [] if self.limit is None else [('limit', self.limit)]
        if self.group_policy is not None:
            params.append(('group_policy', self.group_policy))
        if self.root_required or self.root_forbidden:
            params.append(('root_required', ','.join(
                sorted(self.root_required) +
                ['!' + t for t in sorted(self.root_forbidden)])))
        for group in self.groups.values():
            params.extend(group.params())
        return sorted(params, key=lambda kv: (kv[0], str(kv[1])))

    def querystring(self):
        """Encoded exactly as Nova encodes it (``urlencode``)."""
        return parse.urlencode(self.params())

    def url(self):
        return '/allocation_candidates?' + self.querystring()

    def sources(self, param, value):
        return list(self.why.get((param, value), ()))


class _Builder:
    """ResourceRequest.from_request_spec, for one Request."""

    def __init__(self, request, standard_classes, pinning=True):
        self.request = request
        self.standard_classes = frozenset(standard_classes)
        self.pinning = pinning
        self.groups = {}
        self.group_policy = None
        #: Set when hw:cpu_policy=dedicated asked for PCPU (Nova's
        #: ``cpu_pinning_requested``): nova-scheduler then asks again.
        self.cpu_pinning_requested = False
        self.why = {key: list(sources)
                    for key, sources in request.why.items()}

    def because(self, param, value, source):
        sources = self.why.setdefault((param, value), [])
        if source not in sources:
            sources.append(source)

    def group(self, suffix=None):
        if suffix not in self.groups:
            self.groups[suffix] = Group(suffix)
        return self.groups[suffix]

    def add_resource(self, rc, amount, source, suffix=None):
        group = self.group(suffix)  # created even when refused, as Nova
        if not (rc.startswith(CUSTOM) or rc in self.standard_classes):
            return  # Nova: "Received an invalid ResourceClass"
        try:
            amount = int(amount)
            if amount < 0:
                raise ValueError(amount)
        except (TypeError, ValueError):
            return  # Nova: "Resource amounts must be nonnegative integers"
        group.resources[rc] = amount
        self.why[('resources' + (suffix or ''), rc)] = [source]

    def add_trait(self, trait, kind, source, suffix=None):
        group = self.group(suffix)
        if kind not in trait_grammar.TRAIT_VALUES:
            return  # Nova: "Only (required, forbidden) traits are supported"
        (group.required if kind == trait_grammar.REQUIRED
         else group.forbidden).add(trait)
        self.because('required' + (suffix or ''),
                             ('!' if kind == trait_grammar.FORBIDDEN
                              else '') + trait, source)

    def merged_resources(self):
        merged = {}
        for group in self.groups.values():
            for rc, amount in group.resources.items():
                merged[rc] = merged.get(rc, 0) + amount
        return merged

    def build(self):
        request, flavor, props = self.request, self.request.flavor, \
            self.request.props
        specs = flavor.extra_specs
        for key, value in specs.items():
            if key == 'group_policy':
                if value in GROUP_POLICIES:
                    self.group_policy = value
                continue
        for entry in trait_grammar.flavor_entries(specs):
            source = 'flavor extra spec %s=%s' % (entry.key, entry.value)
            if entry.kind == trait_grammar.RESOURCES:
                self.add_resource(entry.name, entry.value, source,
                                  entry.group)
            else:
                self.add_trait(entry.name, entry.value, source, entry.group)
        suffixed_from_flavor = len([s for s in self.groups if s])
        for trait in props.traits_required:
            self.add_trait(trait, trait_grammar.REQUIRED,
                           'image property trait:%s=required' % trait)
        if self.pinning:
            self._pinning()
        merged = self.merged_resources()
        if VCPU not in merged and PCPU not in merged:
            self.add_resource(VCPU, flavor.vcpus, 'flavor vcpus=%d'
                              % flavor.vcpus)
        if MEMORY_MB not in merged:
            self.add_resource(MEMORY_MB, flavor.memory_mb,
                              'flavor ram=%d' % flavor.memory_mb)
        if DISK_GB not in merged:
            disk = flavor.ephemeral_gb + _mb_to_ceil_gb(flavor.swap)
            parts = ['ephemeral=%d' % flavor.ephemeral_gb,
                     'swap=%d MB' % flavor.swap]
            if not request.is_bfv:
                disk += flavor.root_gb
                parts.insert(0, 'disk=%d' % flavor.root_gb)
            else:
                parts.append('root disk on a volume')
            if disk:
                self.add_resource(DISK_GB, disk,
                                  'flavor %s' % ', '.join(parts))
        self._mem_encryption()
        self._vpmems()
        self._vtpm()
        self._pci_numa_affinity()
        self._secure_boot()
        self._maxphysaddr()
        self._stateless_firmware()
        for group in self.groups.values():
            for rc in [rc for rc, n in group.resources.items() if n == 0]:
                del group.resources[rc]
        self.groups = {s: g for s, g in self.groups.items()
                       if not g.is_empty()}
        return suffixed_from_flavor

    # -- the hw: translations, each as Nova's ResourceRequest ---------------

    def _flavor_image(self, key, prefix='hw'):
        """hardware._get_flavor_image_meta."""
        return (self.request.flavor.extra_specs.get('%s:%s' % (prefix, key)),
                self.request.props.get('%s_%s' % (prefix, key)))

    def _unique(self, key, prefix='hw'):
        """hardware._get_unique_flavor_image_meta."""
        flavor_value, image_value = self._flavor_image(key, prefix)
        if image_value and flavor_value and image_value != flavor_value:
            raise NovaRefuses(
                'Nova refuses flavor %s with this image: %s:%s=%s in the '
                'flavor conflicts with %s_%s=%s in the image'
                % (self.request.flavor.name, prefix, key, flavor_value,
                   prefix, key, image_value))
        return flavor_value or image_value

    def _source(self, key, prefix='hw'):
        flavor_value, image_value = self._flavor_image(key, prefix)
        if flavor_value is not None:
            return 'flavor extra spec %s:%s=%s' % (prefix, key, flavor_value)
        return 'image property %s_%s=%s' % (prefix, key, image_value)

    def _cpu_policy(self):
        flavor_policy, image_policy = self._flavor_image('cpu_policy')
        if flavor_policy and flavor_policy not in CPU_POLICIES:
            raise NovaRefuses('Nova refuses flavor %s: hw:cpu_policy=%s is '
                              'not one of %s' % (self.request.flavor.name,
                                                 flavor_policy,
                                                 ', '.join(CPU_POLICIES)))
        forbidden = NovaRefuses(
            'Nova refuses flavor %s with this image: hw_cpu_policy=%s in '
            'the image is forbidden by hw:cpu_policy=%s in the flavor'
            % (self.request.flavor.name, image_policy, flavor_policy))
        if flavor_policy == 'dedicated':
            return flavor_policy
        if flavor_policy == 'mixed':
            if image_policy == 'dedicated':
                raise forbidden
            return flavor_policy
        if flavor_policy == 'shared':
            if image_policy in ('mixed', 'dedicated'):
                raise forbidden
            return flavor_policy
        return image_policy if image_policy in CPU_POLICIES else None

    def _cpu_thread_policy(self):
        flavor_policy, image_policy = self._flavor_image('cpu_thread_policy')
        if flavor_policy and flavor_policy not in CPU_THREAD_POLICIES:
            raise NovaRefuses('Nova refuses flavor %s: hw:cpu_thread_policy'
                              '=%s is not one of %s'
                              % (self.request.flavor.name, flavor_policy,
                                 ', '.join(CPU_THREAD_POLICIES)))
        if flavor_policy in (None, 'prefer'):
            return flavor_policy or image_policy
        if image_policy and image_policy != flavor_policy:
            raise NovaRefuses(
                'Nova refuses flavor %s with this image: '
                'hw_cpu_thread_policy=%s in the image conflicts with '
                'hw:cpu_thread_policy=%s in the flavor'
                % (self.request.flavor.name, image_policy, flavor_policy))
        return flavor_policy

    def _emulator_threads_policy(self):
        policy = self.request.flavor.extra_specs.get(
            'hw:emulator_threads_policy')
        if not policy:
            return None
        if policy not in EMULATOR_THREADS_POLICIES:
            raise NovaRefuses('Nova refuses flavor %s: '
                              'hw:emulator_threads_policy=%s is not one of '
                              '%s' % (self.request.flavor.name, policy,
                                      ', '.join(EMULATOR_THREADS_POLICIES)))
        return policy

    def _mask(self, mask):
        vcpus = self.request.flavor.vcpus
        if mask.strip().startswith('^'):
            return parse_cpu_spec('0-%d,%s' % (vcpus - 1, mask))
        return parse_cpu_spec(mask)

    def _dedicated_cpus(self):
        mask = self.request.flavor.extra_specs.get('hw:cpu_dedicated_mask')
        if not mask:
            return None
        pcpus = self._mask(mask)
        cpus = set(range(self.request.flavor.vcpus))
        if not pcpus or not cpus - pcpus or not pcpus <= cpus:
            raise NovaRefuses('Nova refuses flavor %s: hw:cpu_dedicated_mask'
                              '=%s is not a proper subset of its vCPUs'
                              % (self.request.flavor.name, mask))
        return pcpus

    def _realtime_cpus(self):
        specs = self.request.flavor.extra_specs
        if not bool_from_string(specs.get('hw:cpu_realtime')):
            return None
        flavor_mask, image_mask = self._flavor_image('cpu_realtime_mask')
        mask = image_mask or flavor_mask
        cpus = set(range(self.request.flavor.vcpus))
        realtime = self._mask(mask) if mask else set(cpus)
        if not realtime or (realtime == cpus and
                            not self._emulator_threads_policy()) or \
                not realtime <= cpus:
            raise NovaRefuses('Nova refuses flavor %s: its realtime vCPU '
                              'mask is missing or invalid'
                              % self.request.flavor.name)
        return realtime

    def _pinning(self):
        flavor = self.request.flavor
        cpu_policy = self._cpu_policy()
        thread_policy = self._cpu_thread_policy()
        emulator_policy = self._emulator_threads_policy()
        source = self._source('cpu_policy')
        pcpus = 0
        if cpu_policy == 'dedicated':
            self.cpu_pinning_requested = True
            pcpus = flavor.vcpus
        if cpu_policy == 'mixed':
            dedicated, realtime = self._dedicated_cpus(), \
                self._realtime_cpus()
            pcpus = len(dedicated or realtime or ())
            self.add_resource(VCPU, flavor.vcpus - pcpus, '%s: %d of the '
                              'flavor\'s %d vcpus shared' % (
                                  source, flavor.vcpus - pcpus,
                                  flavor.vcpus))
        if cpu_policy in ('dedicated', 'mixed'):
            why = '%s: %d of the flavor\'s %d vcpus dedicated' % (
                source, pcpus, flavor.vcpus)
            if emulator_policy == 'isolate':
                pcpus += 1
                why += ', plus one for hw:emulator_threads_policy=isolate'
            self.add_resource(PCPU, pcpus, why)
        kind = {'isolate': trait_grammar.FORBIDDEN,
                'require': trait_grammar.REQUIRED}.get(thread_policy)
        if kind:
            self.add_trait('HW_CPU_HYPERTHREADING', kind,
                           self._source('cpu_thread_policy'))

    def _mem_encryption(self):
        request = self.request
        flavor_str, image_value = self._flavor_image('mem_encryption')
        flavor_value = (None if flavor_str is None
                        else bool_from_string(flavor_str))
        if not flavor_value and not image_value:
            return
        if flavor_value is not None and image_value is not None and \
                flavor_value != image_value:
            raise NovaRefuses(
                'Nova refuses flavor %s with this image: hw:mem_encryption='
                '%s in the flavor conflicts with hw_mem_encryption=%s in '
                'the image' % (request.flavor.name, flavor_str, image_value))
        if request.props.get('hw_firmware_type') != 'uefi':
            raise NovaRefuses('Nova refuses memory encryption without '
                              'hw_firmware_type=uefi on the image')
        machine = request.props.get('hw_machine_type')
        if machine is not None and 'q35' not in machine:
            raise NovaRefuses('Nova refuses memory encryption with '
                              'hw_machine_type=%s (needs q35)' % machine)
        source = self._source('mem_encryption')
        self.add_resource(MEM_ENCRYPTION_CONTEXT, 1, source)
        traits = MEM_ENCRYPTION_TRAITS[request.release]
        if not traits:
            return  # Nova 31: no trait
        flavor_model, image_model = self._flavor_image('mem_encryption_model')
        if flavor_model is not None and image_model is not None and \
                flavor_model != image_model:
            raise NovaRefuses(
                'Nova refuses flavor %s with this image: '
                'hw:mem_encryption_model=%s in the flavor conflicts with '
                'hw_mem_encryption_model=%s in the image'
                % (request.flavor.name, flavor_model, image_model))
        model = image_model or flavor_model or 'amd-sev'
        if model not in traits:
            raise NovaRefuses('Nova refuses memory encryption model %s: '
                              'Nova %d knows %s' % (model, request.release,
                                                    ', '.join(traits)))
        if request.release >= 34:
            if model in STATELESS_MODELS and not _stateless(request.props):
                raise NovaRefuses('Nova refuses memory encryption model %s '
                                  'without hw_firmware_stateless=true on '
                                  'the image' % model)
            if model in NO_VIDEO_MODELS and \
                    request.props.get('hw_video_model') != 'none':
                raise NovaRefuses('Nova refuses memory encryption model %s '
                                  'without hw_video_model=none' % model)
        model_source = ('%s, model %s' % (source, model)
                        if image_model or flavor_model else
                        '%s (model amd-sev, the default)' % source)
        self.add_trait(traits[model], trait_grammar.REQUIRED, model_source)

    def _vpmems(self):
        pmem = self.request.flavor.extra_specs.get('hw:pmem')
        if not pmem:
            return
        labels = [label.strip() for label in pmem.split(',')
                  if label.strip()]
        amounts = {}
        for label in labels:
            rc = normalize_resource_class('PMEM_NAMESPACE_' + label)
            amounts[rc] = amounts.get(rc, 0) + 1
        for rc, amount in amounts.items():
            self.add_resource(rc, amount, 'flavor extra spec hw:pmem=%s'
                              % pmem)

    def _vtpm(self):
        version = self._unique('tpm_version')
        if version is None:
            return
        if version not in TPM_VERSIONS:
            raise NovaRefuses('Nova refuses TPM version %s (knows %s)' % (
                version, ', '.join(TPM_VERSIONS)))
        model = self._unique('tpm_model')
        if model is None:
            model = 'tpm-tis'
        elif model not in TPM_MODELS:
            raise NovaRefuses('Nova refuses TPM model %s (knows %s)' % (
                model, ', '.join(TPM_MODELS)))
        elif model == 'tpm-crb' and version != '2.0':
            raise NovaRefuses('Nova refuses TPM model tpm-crb with version '
                              '%s (needs 2.0)' % version)
        model_trait = ('COMPUTE_SECURITY_TPM_CRB' if model == 'tpm-crb'
                       else 'COMPUTE_SECURITY_TPM_TIS')
        version_trait = ('COMPUTE_SECURITY_TPM_2_0' if version == '2.0'
                         else 'COMPUTE_SECURITY_TPM_1_2')
        source = self._source('tpm_version')
        self.add_trait(model_trait, trait_grammar.REQUIRED, '%s (TPM model '
                       '%s)' % (source, model))
        self.add_trait(version_trait, trait_grammar.REQUIRED, source)

    def _pci_numa_affinity(self):
        flavor_policy, image_policy = self._flavor_image(
            'pci_numa_affinity_policy')
        if flavor_policy and image_policy and flavor_policy != image_policy:
            raise NovaRefuses('Nova refuses flavor %s with this image: their '
                              'PCI NUMA affinity policies differ'
                              % self.request.flavor.name)
        policy = flavor_policy or image_policy
        if policy and policy not in PCI_NUMA_POLICIES:
            raise NovaRefuses('Nova refuses PCI NUMA affinity policy %s'
                              % policy)
        if policy == 'socket':
            self.add_trait('COMPUTE_SOCKET_PCI_NUMA_AFFINITY',
                           trait_grammar.REQUIRED,
                           self._source('pci_numa_affinity_policy'))

    def _secure_boot(self):
        policy = self._unique('secure_boot', prefix='os')
        if policy is None:
            return
        if policy not in SECURE_BOOT:
            raise NovaRefuses('Nova refuses secure boot policy %s (knows '
                              '%s)' % (policy, ', '.join(SECURE_BOOT)))
        if policy == 'required':
            self.add_trait('COMPUTE_SECURITY_UEFI_SECURE_BOOT',
                           trait_grammar.REQUIRED,
                           self._source('secure_boot', prefix='os'))

    def _maxphysaddr(self):
        mode = self._unique('maxphysaddr_mode')
        if mode is None:
            return
        if mode not in MAXPHYSADDR_MODES:
            raise NovaRefuses('Nova refuses hw maxphysaddr mode %s' % mode)
        trait = {'passthrough': 'COMPUTE_ADDRESS_SPACE_PASSTHROUGH',
                 'emulate': 'COMPUTE_ADDRESS_SPACE_EMULATED'}[mode]
        self.add_trait(trait, trait_grammar.REQUIRED,
                       self._source('maxphysaddr_mode'))

    def _stateless_firmware(self):
        props = self.request.props
        if self.request.release < 34 and props.get('hw_firmware_stateless') \
                and props.get('hw_firmware_type') != 'uefi':
            raise NovaRefuses('Nova refuses hw_firmware_stateless without '
                              'hw_firmware_type=uefi')
        if _stateless(props):
            self.add_trait('COMPUTE_SECURITY_STATELESS_FIRMWARE',
                           trait_grammar.REQUIRED,
                           'image property hw_firmware_stateless=%s' %
                           props.get('hw_firmware_stateless'))


def comparable(url):
    """A query (a URL, its query string, or a line of Placement's access
    log holding one) as a comparable value: each parameter with its terms,
    order aside, encoding aside. Two queries are the same when these are
    equal (same resources, traits, member_of, limit ...)."""
    text = str(url).split('?', 1)[-1].split()[0]
    found = []
    for key, value in parse.parse_qsl(text, keep_blank_values=True):
        if key.startswith('member_of'):
            negated, _, uuids = value.partition(':')
            terms = (negated,) + tuple(sorted(uuids.split(',')))
        else:
            terms = tuple(sorted(value.split(',')))
        found.append((key, terms))
    return sorted(found)


def _stateless(props):
    """hardware.get_stateless_firmware_constraint, truthy or not."""
    return bool(props.get('hw_firmware_stateless')) and \
        props.get('hw_firmware_type') == 'uefi'


def _mb_to_ceil_gb(mb):
    """nova.compute.utils.convert_mb_to_ceil_gb."""
    return int(math.ceil(mb / 1024.0)) if mb else 0


def normalize_resource_class(name):
    """os_resource_classes.normalize_name."""
    return CUSTOM + re.sub('[^0-9A-Za-z]+', '_', name).upper()


def parse_cpu_spec(spec):
    """nova.virt.hardware.parse_cpu_spec: '1-4,^3,6' -> {1, 2, 4, 6}."""
    included, rejected = set(), set()
    for rule in spec.split(','):
        rule = rule.strip()
        if not rule:
            continue
        parts = rule.split('-', 1)
        try:
            if len(parts) > 1:
                reject = parts[0][:1] == '^'
                start, end = int(parts[0].lstrip('^').strip()), \
                    int(parts[1].strip())
                if start > end:
                    raise ValueError(rule)
                (rejected if reject else included).update(
                    range(start, end + 1))
            elif rule[0] == '^':
                rejected.add(int(rule[1:].strip()))
            else:
                included.add(int(rule))
        except ValueError:
            raise NovaRefuses('Nova refuses the CPU mask %r' % spec) \
                from None
    return included - rejected


def build(request, standard_classes, limit=1000, pinning=True):
    """The Query nova-scheduler sends for ``request`` (after the request
    filters ran on it): ResourceRequest.from_request_spec, then
    resources_from_request_spec's aggregates, limit and group policy.

    ``standard_classes``: the resource classes Nova's os-resource-classes
    knows (anything else not ``CUSTOM_`` Nova drops); ``limit``:
    ``[scheduler] max_placement_results``; ``pinning``: False for the
    fallback query nova-scheduler sends after a ``hw:cpu_policy=dedicated``
    one (VCPU, no pinning translated; ``[workarounds]
    disable_fallback_pcpu_query`` stops it).
    """
    builder = _Builder(request, standard_classes, pinning)
    suffixed_from_flavor = builder.build()
    if request.aggregates:
        builder.group(None).member_of = [entry.split(',')
                                         for entry in request.aggregates]
    if request.forbidden_aggregates:
        builder.group(None).forbidden_aggregates |= \
            request.forbidden_aggregates
    group_policy = builder.group_policy
    suffixed = len([s for s in builder.groups if s])
    if suffixed >= 2 and not group_policy and suffixed_from_flavor <= 1:
        group_policy = 'none'
    return Query(groups=builder.groups,
                 root_required=set(request.root_required),
                 root_forbidden=set(request.root_forbidden),
                 group_policy=group_policy,
                 limit=None if request.in_server_group else limit,
                 why=builder.why,
                 cpu_pinning_requested=builder.cpu_pinning_requested)


def all_required_traits(request, standard_classes=()):
    """ResourceRequest(...).all_required_traits: the groups' required
    traits (not the root's), as isolate_aggregates reads them."""
    builder = _Builder(request, standard_classes)
    builder.build()
    return set().union(*(g.required for g in builder.groups.values()))
