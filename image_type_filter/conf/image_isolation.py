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

"""[image_isolation] options: traits that reserve hosts, and what asks."""

from oslo_config import cfg

image_isolation_group = cfg.OptGroup(
    'image_isolation', title='Image-property isolation',
    help='Tagged images go only to tagged hosts, and untagged images never '
         'go there, enforced by Placement with required and forbidden '
         'traits.')

image_isolation_opts = [
    cfg.BoolOpt(
        'enabled',
        default=False,
        help='Apply the isolation rules to every request, volume-backed ones '
             'included (the image properties still describe the server). '
             'Enable only once the reserved hosts carry their trait '
             '(``[virt_capabilities] custom_traits`` on those nodes). '
             'Inside nova-scheduler, with ``[image_type_filter] enforce`` '
             'True, it needs ``ImageTypeRebuildFilter`` in '
             '``[filter_scheduler] enabled_filters`` and refuses to start '
             'without it; nova-scheduler creates the reserved traits in '
             'Placement at start-up.'),
    cfg.ListOpt(
        'rules',
        default=[],
        help='Reserved traits and what asks for them, comma-separated. '
             '``CUSTOM_X`` alone reserves the hosts carrying CUSTOM_X for '
             'requests whose image or flavor says ``trait:CUSTOM_X=required`` '
             '(Nova\'s own spelling: an image property, or a flavor extra '
             'spec). ``KEY:CUSTOM_X`` or ``KEY=VALUE:CUSTOM_X`` also lets an '
             'image property ask for it: KEY exists (and equals VALUE, '
             'compared case-insensitively). A request that asks requires '
             'the trait on the host; every other request forbids it. '
             'Inside nova-scheduler KEY must be a property Nova keeps '
             '(``os_distro``, ``hw_*``, ``img_*`` ...): Nova drops any other '
             'before scheduling, so such a rule is refused at start-up. A '
             'reserved trait Placement does not know yet is forbidden '
             'nowhere, and a request that asks for it gets "No valid host" '
             'naming it. Values cannot contain commas.'),
]


def list_opts():
    return {image_isolation_group: image_isolation_opts}
