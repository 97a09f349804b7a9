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

"""[virt_capabilities] options of the reporter itself."""

from oslo_config import cfg

from image_type_common import backoff
from image_type_common import nova_releases

reporter_group = cfg.OptGroup(
    'virt_capabilities', title='Reporter options (virt-capabilities)',
    help='How the reporter keeps its traits on the resource provider.')

REPORTER, NOVA_COMPUTE = 'reporter', 'nova-compute'
#: Retries after a 409 generation conflict: the default, here only.
CONFLICT_RETRIES = 8

# The reporter's back-offs. Constants, not options: they pace how one node
# retries a service the whole fleet shares, and follow from how that
# service behaves, not from anything that differs between sites. What an
# operator does choose is an option or an argument: how many conflicts to
# retry (conflict_retries), how long to wait for the provider (--wait) and
# how often to sync (--interval), which also caps the credentials' wait.

#: After a 409 generation conflict: another writer changed the provider
#: between our read and our write; it is usually done within milliseconds.
CONFLICT_BACKOFF = backoff.Backoff(base=0.05, cap=5.0)
#: While waiting (``--wait``) for nova-compute to create the provider, or
#: for Placement to answer at start-up.
PROVIDER_WAIT_BACKOFF = backoff.Backoff(base=0.5, cap=16.0)
#: As a service, after Placement or Keystone refused the credentials (a
#: password rotated, a role not granted yet): the configuration files are
#: re-read before each try. Never longer than the service's interval.
CREDENTIALS_BACKOFF = backoff.Backoff(base=5.0, cap=300.0)

reporter_opts = [
    cfg.StrOpt(
        'image_type_traits_owner',
        default=NOVA_COMPUTE,
        choices=[
            (NOVA_COMPUTE, 'nova-compute keeps the COMPUTE_IMAGE_TYPE_* '
                           'traits (every supported Nova reports them); '
                           'this reporter keeps only its custom and '
                           'image-metadata traits and never touches an '
                           'image-type trait.'),
            (REPORTER, 'This reporter keeps the COMPUTE_IMAGE_TYPE_* traits '
                       'on the provider too.')],
        help='Who owns the image-type traits on this node\'s provider. Both '
             'give the same answer for the same nova.conf. The default, '
             '``nova-compute``, is right wherever nova-compute runs: every '
             'supported Nova (' + nova_releases.RANGE + ') reports them '
             'itself, so one writer owns them. ``reporter`` is for a '
             'provider no nova-compute reports image types for (a test '
             'bed, or a driver that reports no capabilities); it is refused '
             'with ``compute_driver = ironic.IronicDriver``, whose image-type '
             'traits nova-compute\'s resource tracker always keeps.'),
    cfg.ListOpt(
        'custom_traits',
        default=[],
        help='CUSTOM_* traits this node carries, for example ``CUSTOM_TROVE`` '
             'on nodes set aside for Trove. The reporter creates them in '
             'Placement when missing and keeps them whoever owns the '
             'image-type traits: a trait dropped from this list is removed '
             'from the provider on the next sync (see ``state_file``), and '
             'no other trait is touched. Names must match '
             '``CUSTOM_[A-Z0-9_]+``. With ``compute_driver = '
             'ironic.IronicDriver`` they are kept as the Ironic node\'s '
             'traits instead (reached through ``[ironic]``), which '
             'nova-compute copies to the node\'s provider: Nova\'s ironic '
             'driver removes any other trait from it.'),
    cfg.BoolOpt(
        'volume_only',
        default=False,
        help='This node boots no image on purpose: only volume-backed '
             'servers (booted from a Cinder volume). The reporter then '
             'keeps ``CUSTOM_IMAGE_TYPE_FILTER_VOLUME_ONLY`` on its provider, '
             'which ``image-type-filter status`` reads to pass a node that '
             'reports no ``COMPUTE_IMAGE_TYPE_*`` trait. Refused unless '
             'nova-compute reports no image type here: list every format '
             'the driver boots in ``[compute] image_type_exclude_list`` '
             '(``virt-capabilities show`` lists them).'),
    cfg.BoolOpt(
        'image_metadata_traits',
        default=True,
        help='Also report the image-metadata traits this node\'s driver '
             'boots but nova-compute never writes, so that the image-'
             'metadata prefilter (``hw_disk_bus``, ``hw_cdrom_bus``, '
             '``hw_vif_model``, ``hw_video_model``, ``hw_architecture``) '
             'can offer the node. Nova 34\'s VMware driver: '
             'COMPUTE_STORAGE_BUS_IDE and _SCSI (also what the legacy '
             '``vmware_adaptertype`` property becomes), '
             'COMPUTE_NET_VIF_MODEL_E1000, _E1000E, _PCNET, _SRIOV, '
             '_VMXNET and _VMXNET3, and COMPUTE_GRAPHICS_MODEL_VMVGA. The '
             'libvirt driver on an armv7l host: HW_ARCH_ARMV7 (nova-compute '
             'computes a name os-traits lacks and reports no architecture '
             'there). Other drivers and hosts: none. Whoever owns the '
             'image-type traits, these are the reporter\'s: nova-compute '
             'never sets or removes them. Switched off, the reporter '
             'removes only those it remembers setting (see ``state_file``) '
             'and leaves any other alone. ``virt-capabilities show`` lists '
             'them with the family each serves.'),
    cfg.StrOpt(
        'host_architecture',
        sample_default='<this machine, as uname -m prints it>',
        help='The host CPU architecture the image-metadata traits are '
             'worked out for, as ``uname -m`` prints it (``armv7l``, '
             '``x86_64`` ...). Default: the machine the reporter runs on, '
             'which for the libvirt driver is what libvirt reports too. Set '
             'it only when the reporter runs on another machine than the '
             'node it reports for. Only the names Nova\'s architecture '
             'field accepts (and its aliases, such as ``amd64``) are; '
             'anything else, ``armv7`` for ``armv7l`` say, is refused.'),
    cfg.StrOpt(
        'state_file',
        help='Where the reporter remembers which custom traits (and '
             'image-metadata traits) it set on which provider, so that a '
             'trait dropped from ``custom_traits``, or all of '
             '``image_metadata_traits`` once switched off, is removed even '
             'after a restart. Default: '
             '``$state_path/virt_capabilities.json`` when ``[DEFAULT] '
             'state_path`` is set; otherwise nothing is written anywhere, and '
             'a dropped trait is removed only by a service that kept running '
             'since it set it. Reporters may share one file: each changes '
             'only its own records, under a lock file beside it '
             '(``.<name>.lock``): one record per provider and reporter (see '
             '``reporter_name``), and a trait another reporter of the same '
             'provider recorded is never removed. If it cannot be saved, '
             'report syncs nothing more and exits 1 naming it.'),
    cfg.StrOpt(
        'status_file',
        sample_default='$state_path/virt_capabilities_status.json',
        help='Where ``report`` records its last sync for monitoring to '
             'read without parsing logs: a small JSON file (time, result, '
             'the error if it failed, the time of the last sync that '
             'succeeded, which providers it changed and how), replaced '
             'atomically after every sync, by the service each cycle. '
             'Default: ``$state_path/virt_capabilities_status.json`` when '
             '``[DEFAULT] state_path`` is set; otherwise none is written. '
             'One per reporter: reporters sharing a ``state_path`` set it '
             'apart. ``virt-capabilities remove`` deletes it.'),
    cfg.StrOpt(
        'reporter_name',
        default='$host',
        help='This reporter\'s name in ``state_file``, under which its '
             'records are kept apart from those of the other reporters '
             'sharing the file. Default: the nova-compute it reports for, '
             'as ``[DEFAULT] host`` names it (this machine\'s host name '
             'unless set). So the reporters of several nova-computes on one '
             'machine, each with its own ``host``, keep separate records, '
             'and a service, its SIGHUP re-read, a one-shot ``report`` and '
             '``remove`` with that nova.conf are one reporter, wherever its '
             'files are. Two reporters of one nova-compute sharing a state '
             'file must each set a name of their own: under one name each '
             'would take the other\'s records for its own. A reporter that '
             'changes its name leaves its records under the old one (set '
             'this to the old name to keep them); ``virt-capabilities '
             'show`` prints it.'),
    cfg.IntOpt(
        'conflict_retries',
        default=CONFLICT_RETRIES,
        min=0,
        help='How many times one sync re-reads and retries a provider after '
             'a 409 generation conflict (another writer changed it between '
             'our read and our write), with jittered back-off.'),
]


def list_opts():
    return {reporter_group: reporter_opts}
