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

"""[image_type_filter] options: how the request filters decide, beside the
on/off switches.

This project's own group, so nothing of ours sits in Nova's ``[scheduler]``
but the spec's ``filter_hosts_by_image_type_support`` (``scheduler.py``).
"""

from oslo_config import cfg

from image_type_common.conf.groups import fresh_group

image_type_filter_group = cfg.OptGroup(
    'image_type_filter', title='Image-type request filters',
    help='How the request filters treat what they cannot map to a trait, '
         'and how often they ask Placement which traits exist.')

IGNORE, REJECT = 'ignore', 'reject'
#: Defaults, here only (settings.FilterSettings reads them from here).
UNKNOWN_FORMAT = IGNORE
TRAITS_REFRESH_INTERVAL = 10.0

image_type_filter_opts = [
    cfg.StrOpt(
        'unknown_format',
        default=UNKNOWN_FORMAT,
        choices=[
            (IGNORE, 'Add no constraint and log a warning once per format '
                     '(Nova\'s behaviour).'),
            (REJECT, 'Fail the request, naming the format and the known '
                     'ones.')],
        help='What to do with an image whose ``disk_format`` maps to no '
             'known ``COMPUTE_IMAGE_TYPE_*`` trait (missing, empty or '
             'unknown).'),
    cfg.FloatOpt(
        'traits_refresh_interval',
        default=TRAITS_REFRESH_INTERVAL,
        min=0,
        help='Seconds a failed read of Placement\'s traits, or a "Placement '
             'does not know this trait" answer, is remembered before '
             'Placement is asked again: while Placement is down the filters '
             'add no request per boot. A boot is refused for "no compute '
             'host carries it" (a format, a reserved trait, an image '
             'property\'s trait) only on a fresh ``GET '
             '/traits?associated=true``, so a host that has just started '
             'carrying the trait takes the next boot; a boot whose trait '
             'some host carries makes no such request.'),
]


def register_opts(conf):
    conf.register_group(fresh_group(image_type_filter_group))
    conf.register_opts(image_type_filter_opts,
                       group=image_type_filter_group.name)


def list_opts():
    return {image_type_filter_group: image_type_filter_opts}
