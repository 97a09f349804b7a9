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

"""[scheduler_client] options of this project's own scheduler client.

The CLI, the demo and the benchmarks ask Placement through
``image_type_filter.client``; nova-scheduler never reads these (inside Nova,
Nova builds the allocation-candidate query).
"""

from oslo_config import cfg

from image_type_common.conf import fresh_group

scheduler_client_group = cfg.OptGroup(
    'scheduler_client', title='This project\'s own scheduler client',
    help='How image-type-filter candidates, the demo and the benchmarks '
         'query Placement. nova-scheduler ignores this section.')

ROOT_REQUIRED, REQUIRED, AUTO = 'root_required', 'required', 'auto'

scheduler_client_opts = [
    cfg.StrOpt(
        'image_type_trait_parameter',
        default=ROOT_REQUIRED,
        choices=[
            (ROOT_REQUIRED, 'Require the trait on the root provider '
                            '(``root_required``, microversion 1.35). '
                            'Correct for every provider tree.'),
            (REQUIRED, 'Put the trait in the unsuffixed ``required`` '
                       'parameter. Selects the same hosts only when every '
                       'compute node keeps its VCPU, MEMORY_MB and DISK_GB '
                       'on its root provider and no sharing providers '
                       'exist (``image-type-filter status`` says whether '
                       'the fleet is flat); Placement answers it faster.'),
            (AUTO, 'Use ``required`` while a check, repeated every '
                   '``image_type_flat_check_interval`` seconds, finds no '
                   'nested and no sharing providers, else '
                   '``root_required``. A tree that turns nested between '
                   'two checks is queried the fast way until the next '
                   'check.')],
        help='Which query parameter the client puts the image-type trait '
             'in. On a flat fleet both select the same hosts and Placement '
             'answers ``required`` about twice as fast (see '
             'benchmarks/README.md). Against a Placement older than 1.35 '
             'the unsuffixed ``required`` parameter is always used.'),
    cfg.IntOpt(
        'image_type_flat_check_interval',
        default=300,
        min=1,
        help='With ``image_type_trait_parameter = auto``: seconds between '
             'two checks of whether the fleet is flat (two Placement '
             'requests per check).'),
]


def register_opts(conf):
    conf.register_group(fresh_group(scheduler_client_group))
    conf.register_opts(scheduler_client_opts,
                       group=scheduler_client_group.name)


def list_opts():
    return {scheduler_client_group: scheduler_client_opts}
