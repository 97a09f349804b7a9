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

"""What Nova (and Glance) would say about a boot request's input.

``candidates`` builds a request from the command line, where a typo costs
nothing; a real cloud refuses, drops or ignores such input. Each check
returns the sentence naming it; the command warns, or with ``--strict``
refuses. The tables are copied literally from Glance and Nova (sources
named); tests/nova compares them with the installed Nova.
"""

import re

from image_type_common import exceptions
from image_type_common import image_metadata
from image_type_common import text
from image_type_filter.scheduler import isolation
from image_type_filter.scheduler import trait_grammar

#: glance/common/config.py, ``[image_format] disk_formats`` default.
GLANCE_DISK_FORMATS = ('ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw',
                       'qcow2', 'vdi', 'iso', 'ploop')

#: nova/objects/image_meta.py ImageMetaProps.fields (nova master at
#: 33.0.0-373-g00a030403f, 2026-08; every field of 31.0.0 is here).
IMAGE_META_PROPS_FIELDS = frozenset((
    'hw_architecture', 'hw_emulation_architecture', 'hw_auto_disk_config',
    'hw_boot_menu', 'hw_cdrom_bus', 'hw_cpu_cores', 'hw_cpu_sockets',
    'hw_cpu_max_cores', 'hw_cpu_max_sockets', 'hw_cpu_max_threads',
    'hw_cpu_policy', 'hw_cpu_thread_policy', 'hw_cpu_realtime_mask',
    'hw_cpu_threads', 'hw_device_id', 'hw_disk_bus', 'hw_disk_type',
    'hw_floppy_bus', 'hw_firmware_type', 'hw_firmware_stateless',
    'hw_input_bus', 'hw_ipxe_boot', 'hw_locked_memory', 'hw_machine_type',
    'hw_mem_encryption', 'hw_mem_encryption_model', 'hw_mem_page_size',
    'hw_numa_nodes', 'hw_numa_cpus', 'hw_numa_mem',
    'hw_pci_numa_affinity_policy', 'hw_pointer_model', 'hw_pmu',
    'hw_qemu_guest_agent', 'hw_rescue_bus', 'hw_rescue_device',
    'hw_rng_model', 'hw_time_hpet', 'hw_serial_port_count',
    'hw_scsi_model', 'hw_video_model', 'hw_video_ram', 'hw_vif_model',
    'hw_viommu_model', 'hw_vm_mode', 'hw_watchdog_action',
    'hw_vif_multiqueue_enabled', 'hw_tpm_model', 'hw_tpm_version',
    'hw_ephemeral_encryption', 'hw_ephemeral_encryption_format',
    'hw_ephemeral_encryption_secret_uuid', 'hw_virtio_packed_ring',
    'hw_maxphysaddr_mode', 'hw_maxphysaddr_bits', 'hw_sound_model',
    'hw_usb_model', 'hw_redirected_usb_ports', 'img_bittorrent',
    'img_bdm_v2', 'img_block_device_mapping', 'img_cache_in_nova',
    'img_compression_level', 'img_hv_requested_version', 'img_hv_type',
    'img_config_drive', 'img_linked_clone', 'img_mappings', 'img_owner_id',
    'img_root_device_name', 'img_use_agent', 'img_version',
    'img_signature', 'img_signature_hash_method',
    'img_signature_certificate_uuid', 'img_signature_key_type',
    'img_hide_hypervisor_id', 'os_admin_user', 'os_command_line',
    'os_distro', 'os_require_quiesce', 'os_secure_boot',
    'os_skip_agent_inject_files_at_boot', 'os_skip_agent_inject_ssh',
    'os_type', 'traits_required'))

#: The same file, ``_set_numa_mem`` and ``_set_numa_cpus``: one
#: ``hw_numa_mem.N`` and ``hw_numa_cpus.N`` per NUMA node.
NUMA_PROPERTY = re.compile(r'^hw_numa_(?:mem|cpus)\.[0-9]+$')
#: Every property name Nova reads: its fields, and the legacy names it
#: reads as other fields (one table, image_metadata: the same file's
#: ``_legacy_property_map`` keys, and vmware_adaptertype, which
#: ``_set_attr_from_legacy_names`` reads too). ``trait:`` keys
#: (``_set_attr_from_trait_names``) are trait_grammar's.
KNOWN = (IMAGE_META_PROPS_FIELDS | frozenset(image_metadata.LEGACY_PROPERTIES)
         | {image_metadata.VMWARE_ADAPTERTYPE})
_BY_LOWER = {k.lower(): k for k in KNOWN}


def disk_format_problems(disk_format):
    if disk_format in GLANCE_DISK_FORMATS:
        return []
    lower = disk_format.lower()
    hint = (' (Glance spells it %s)' % lower
            if lower in GLANCE_DISK_FORMATS else '')
    return ['--disk-format %s is not one of Glance\'s disk formats%s: '
            'Glance refuses such an image; Glance knows %s'
            % (text.safe_repr(disk_format), hint,
               ', '.join(sorted(GLANCE_DISK_FORMATS)))]


def property_problems(properties, rule_keys=()):
    """One sentence per image property Nova would drop, ignore or refuse.
    ``rule_keys``: keys an isolation rule reads (its own check names them)."""
    found = []
    ignored_traits = dict(trait_grammar.image_ignored_traits(properties))
    for key, value in properties.items():
        shown = text.safe_repr('%s=%s' % (key, value))
        why = ignored_traits.get(key)
        if why:
            found.append('--image-property %s: %s' % (shown, why))
            continue
        if key.startswith(trait_grammar.IMAGE_PREFIX):
            continue  # trait:X=required: Nova asks for X
        if key in KNOWN or NUMA_PROPERTY.match(key) or key in rule_keys:
            found.extend(_value_problems(key, value, shown))
            continue
        known = _BY_LOWER.get(key.lower())
        if known:
            found.append('--image-property %s: Nova ignores it (property '
                         'names are case-sensitive: %s)' % (shown, known))
        else:
            found.append('--image-property %s: Nova drops it, having no '
                         'image property of that name' % shown)
    return found


def _value_problems(key, value, shown):
    """A family property's value Nova's field refuses (fields.py ALL)."""
    family = image_metadata.FAMILY_BY_PROPERTY.get(key)
    if family is None:
        return []
    canonical = image_metadata.canonical(key, value)
    if canonical in family.values:
        return []
    return ['--image-property %s: Nova refuses the image, %s is not one of '
            'its values for %s' % (shown, text.safe_repr(value), key)]


def rule_problems(rules):
    """What nova-scheduler says at start-up about these isolation rules
    (the validation the filter runs when Nova loads it)."""
    try:
        isolation.parse_rules(rules)
    except exceptions.ConfigError:
        return []  # malformed anywhere: the filter itself refuses it
    try:
        isolation.parse_rules(rules, IMAGE_META_PROPS_FIELDS)
    except exceptions.ConfigError as exc:
        return ['nova-scheduler would refuse to start: %s' % exc]
    return []


def rule_keys(rules):
    """The image properties the (well-formed) rules read."""
    try:
        return {r.key for r in isolation.parse_rules(rules) if r.key}
    except exceptions.ConfigError:
        return set()
