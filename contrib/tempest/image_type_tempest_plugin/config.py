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

"""The plugin's options, in [image_type_filter] of tempest.conf.

Everything the tests take from the deployment is here; which host boots
which format is read from Placement at run time.
"""

from oslo_config import cfg

group = cfg.OptGroup(
    name='image_type_filter',
    title='image-type-filter tests',
    help='Where the cloud keeps what the image-type-filter tests need.')

opts = [
    cfg.DictOpt(
        'image_files', default={},
        help='Image files to upload, one per Glance disk_format, as '
             'format:path (e.g. raw:/srv/empty.raw,qcow2:/srv/empty.qcow2,'
             'vmdk:/srv/empty.vmdk). Each format is booted once; a format '
             'no compute host reports must end in ERROR. Empty skips the '
             'tests.'),
    cfg.StrOpt(
        'reserved_trait', default='CUSTOM_TROVE',
        help='The trait [image_isolation] rules reserves hosts with: an '
             'image with trait:<it>=required must land on a host carrying '
             'it, and untagged images never do. Empty skips that test.'),
    cfg.StrOpt(
        'image_metadata_family', default=None,
        help='A family enabled in nova-scheduler\'s '
             '[image_metadata_prefilter] families (storage_bus, vif_model, '
             'graphics_model, architecture, emulation_architecture, '
             'viommu_model). Unset skips that test.'),
    cfg.StrOpt(
        'scheduler_log', default=None,
        help='Path of nova-scheduler\'s log file (oslo.log\'s default '
             'format, which names the process id; [DEFAULT] debug = True '
             'for the per-boot lines). Unset skips the checks that read '
             'it.'),
    cfg.IntOpt(
        'scheduler_workers', default=2, min=1,
        help='nova-scheduler\'s [scheduler] workers: how many distinct '
             'process ids must run the filters.'),
    cfg.IntOpt(
        'worker_boots', default=20, min=1,
        help='At most this many boots to see every scheduler worker run '
             'the filters.'),
    cfg.IntOpt(
        'boots_per_format', default=3, min=1,
        help='Boots of each format that only some hosts boot (landing '
             'right by chance gets unlikely); a format every host boots '
             'is booted once.'),
    cfg.IntOpt(
        'untagged_boots', default=10, min=1,
        help='Untagged boots that must all miss the reserved hosts.'),
    cfg.IntOpt(
        'boots_at_once', default=5, min=1,
        help='Servers created at once (keep it inside the project\'s '
             'instances quota, 10 by default).'),
]
