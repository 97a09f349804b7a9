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

"""[DEFAULT] options nova-compute already has, read from its own nova.conf."""

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


def register_opts(conf):
    conf.register_opts(default_opts)


def list_opts():
    return {'DEFAULT': default_opts}
