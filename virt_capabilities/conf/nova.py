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

"""Options nova-compute already has, read from its own nova.conf: the
driver, the options that decide the formats it boots (and the operator's
exclusions of some), and where its node's provider is found."""

import socket

from oslo_config import cfg

default_opts = [
    cfg.StrOpt(
        'compute_driver',
        help='The virt driver nova-compute uses, as nova.conf names it, for '
             'example ``libvirt.LibvirtDriver`` or '
             '``nova.virt.vmwareapi.VMwareVCDriver``. It decides which disk '
             'image formats this node can boot.'),
    cfg.BoolOpt(
        'force_raw_images',
        default=True,
        help='Whether nova-compute converts every image to raw before use. '
             'With the libvirt driver on the ``rbd`` or ``lvm`` image backend '
             'and this off, qcow2 images cannot be booted, so no qcow2 trait '
             'is reported.'),
    cfg.StrOpt(
        'host',
        default=socket.gethostname(),
        sample_default='<current_hostname>',
        help='Name of this compute host, as nova-compute reports it. With '
             'the fake driver, the name of the resource provider when no '
             '``compute_id`` file exists and no ``--provider`` is given '
             '(for the libvirt driver, the reporter takes this machine\'s '
             'host name instead, by libvirt\'s getHostname() rule).'),
    cfg.StrOpt(
        'state_path',
        help='nova-compute\'s state directory, as its nova.conf sets it. Its '
             '``compute_id`` file, when present, holds the uuid of this '
             'node\'s resource provider (as does one beside a config file, '
             'where nova-compute looks first), and the reporter keeps its '
             'state file there. Unset: ``compute_id`` is looked for only '
             'beside the config files and, unless ``[virt_capabilities] '
             'state_file`` is set, no state file is kept.'),
]

libvirt_group = cfg.OptGroup(
    'libvirt', title='Libvirt options',
    help='The libvirt driver options that decide supported image formats.')

libvirt_opts = [
    cfg.StrOpt(
        'images_type',
        default='default',
        choices=('raw', 'flat', 'qcow2', 'lvm', 'rbd', 'ploop', 'default'),
        help='Image backend of instance disks. With ``rbd`` or ``lvm`` and '
             '``[DEFAULT] force_raw_images = False`` the driver cannot boot '
             'qcow2 images (and Nova refuses ``rbd`` with that combination '
             'outright).'),
    cfg.StrOpt(
        'virt_type',
        default='kvm',
        choices=('kvm', 'lxc', 'qemu', 'parallels'),
        help='Libvirt domain type. Only ``parallels`` boots ploop images.'),
]

compute_group = cfg.OptGroup(
    'compute', title='Compute options',
    help='Options of nova-compute that narrow the reported image formats.')

compute_opts = [
    cfg.ListOpt(
        'image_type_exclude_list',
        default=[],
        help='Disk image formats this node must not be scheduled for even '
             'though its driver could boot them, for example ``qcow2`` on a '
             'Ceph-backed node where conversion would be slow. Each entry '
             'must be a known format (the ``COMPUTE_IMAGE_TYPE_*`` traits of '
             'os-traits, in lower case).'),
]


def list_opts():
    return {'DEFAULT': default_opts, libvirt_group: libvirt_opts,
            compute_group: compute_opts}
