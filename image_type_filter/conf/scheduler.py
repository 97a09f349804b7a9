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

"""[scheduler] options: the spec's switch, and Nova's own options we honour.

``filter_hosts_by_image_type_support`` is the one option of ours in Nova's
group (the spec names it there). Nova's two are declared here only outside
nova-scheduler, so a nova.conf that sets them means the same thing.
"""

from oslo_config import cfg

from image_type_common.conf import fresh_group

scheduler_group = cfg.OptGroup(
    'scheduler', title='Scheduler options',
    help='Nova\'s scheduler options, and this project\'s switch for its '
         'image-type request filter.')

NOVA_OPTION = 'query_placement_for_image_type_support'
NOVA_METADATA_OPTION = 'image_metadata_prefilter'

filter_opts = [
    cfg.BoolOpt(
        'filter_hosts_by_image_type_support',
        default=False,
        help='Ask Placement only for hosts whose virt driver can boot the '
             'image\'s ``disk_format``, by requiring the matching '
             '``COMPUTE_IMAGE_TYPE_*`` trait on the compute node. '
             'Volume-backed requests are not filtered. Upgrade rule: enable '
             'this only once every compute node reports its image-type '
             'traits (``image-type-filter status`` exits 0); a node that '
             'reports none would receive no boots at all. Nova\'s own '
             '``query_placement_for_image_type_support`` turns it on too; '
             'with both on, the trait is added once.'),
]

nova_opts = [
    cfg.BoolOpt(
        NOVA_OPTION,
        default=False,
        help='Nova\'s own option for its image-type request filter, read '
             'here so that a nova.conf which sets it means the same to this '
             'project\'s tools: it turns the image-type filter on like '
             '``filter_hosts_by_image_type_support``. Inside nova-scheduler '
             'this is Nova\'s option and is not declared again.'),
    cfg.BoolOpt(
        NOVA_METADATA_OPTION,
        default=False,
        help='Nova\'s own image-metadata request filter, read here only so '
             'that ``image-type-filter status`` and the request filters can '
             'warn when it is on beside ``[image_metadata_prefilter] '
             'families``: it adds none of an image\'s traits when one '
             'computed name is not in os-traits, and sends i686 images only '
             'to HW_ARCH_I686 hosts. Inside nova-scheduler this is Nova\'s '
             'option and is not declared again.'),
]


def register_filter_opts(conf):
    """The spec's switch: what nova-scheduler registers in [scheduler]."""
    conf.register_group(fresh_group(scheduler_group))
    conf.register_opts(filter_opts, group=scheduler_group.name)


def register_opts(conf):
    """Everything, on a ConfigOpts of this project's own (not Nova's)."""
    register_filter_opts(conf)
    conf.register_opts(nova_opts, group=scheduler_group.name)


def list_opts():
    return {scheduler_group: filter_opts + nova_opts}
