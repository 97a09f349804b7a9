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

"""The scheduling modes the same workload is booted in, in order.

Each mode is the nova.conf nova-scheduler reads (every option the modes
touch, set in every mode, so no mode inherits the last one's) and which
Placement answers: the stock one devstack installed, or the same tree with
``placement_runner/patches/root-required-prefilter.patch`` applied.
"""

import dataclasses

from benchmarks.fleet import shape


@dataclasses.dataclass(frozen=True)
class Mode:
    name: str
    about: str
    ours: bool = False
    nova_prefilters: bool = False
    all_families: bool = False
    isolation: bool = False
    patched_placement: bool = False

    def settings(self):
        """[(section, option, value)] for nova.conf. Run on the node,
        where devstack installed this project: every family is the
        product's own list."""
        families = ()
        if self.all_families:
            from image_type_common import image_metadata
            families = image_metadata.NAMES
        return [
            ('scheduler', 'filter_hosts_by_image_type_support', self.ours),
            ('scheduler', 'query_placement_for_image_type_support',
             self.nova_prefilters),
            ('scheduler', 'image_metadata_prefilter', self.nova_prefilters),
            ('image_metadata_prefilter', 'families',
             ','.join(families)),
            ('image_isolation', 'enabled', self.isolation),
            ('image_isolation', 'rules',
             shape.RESERVED_TRAIT if self.isolation else ''),
        ]


MODES = (
    Mode('off', 'no image filtering: Nova\'s default'),
    Mode('nova', 'Nova\'s own query_placement_for_image_type_support and '
         'image_metadata_prefilter', nova_prefilters=True),
    Mode('project', 'this project\'s filters, README\'s configuration',
         ours=True),
    Mode('project-all', 'this project\'s filters, every image-metadata '
         'family and isolation of CUSTOM_TROVE hosts', ours=True,
         all_families=True, isolation=True),
    Mode('project-patched', 'README\'s configuration on Placement with '
         'the root_required patch', ours=True, patched_placement=True),
)

BY_NAME = {m.name: m for m in MODES}
