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

"""[libvirt] options that change which formats the libvirt driver boots."""

from oslo_config import cfg

from image_type_common.conf import fresh_group

libvirt_group = cfg.OptGroup(
    'libvirt', title='Libvirt options',
    help='The libvirt driver options that decide supported image formats.')

IMAGES_TYPES = ('raw', 'flat', 'qcow2', 'lvm', 'rbd', 'ploop', 'default')
VIRT_TYPES = ('kvm', 'lxc', 'qemu', 'parallels')

libvirt_opts = [
    cfg.StrOpt(
        'images_type',
        default='default',
        choices=IMAGES_TYPES,
        help='Image backend of instance disks. With ``rbd`` or ``lvm`` and '
             '``[DEFAULT] force_raw_images = False`` the driver cannot boot '
             'qcow2 images (and Nova refuses ``rbd`` with that combination '
             'outright).'),
    cfg.StrOpt(
        'virt_type',
        default='kvm',
        choices=VIRT_TYPES,
        help='Libvirt domain type. Only ``parallels`` boots ploop images.'),
]


def register_opts(conf):
    conf.register_group(fresh_group(libvirt_group))
    conf.register_opts(libvirt_opts, group=libvirt_group.name)


def list_opts():
    return {libvirt_group: libvirt_opts}
