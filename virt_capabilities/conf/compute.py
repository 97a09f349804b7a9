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

"""[compute] options: the operator's own exclusions."""

from oslo_config import cfg

from image_type_common.conf import fresh_group

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


def register_opts(conf):
    conf.register_group(fresh_group(compute_group))
    conf.register_opts(compute_opts, group=compute_group.name)


def list_opts():
    return {compute_group: compute_opts}
