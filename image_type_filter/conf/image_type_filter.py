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
on/off switches, and whether what they decide is applied."""

from oslo_config import cfg

image_type_filter_group = cfg.OptGroup(
    'image_type_filter', title='Image-type request filters',
    help='Whether the request filters apply what they decide or only log '
         'it, how they treat what they cannot map to a trait, and how '
         'often they ask Placement which traits exist.')

IGNORE, REJECT = 'ignore', 'reject'

image_type_filter_opts = [
    cfg.BoolOpt(
        'enforce',
        default=True,
        help='Apply what this project\'s request filters decide. False is '
             'log-only, for rolling them out: the image-type, isolation and '
             'image-metadata filters and the rebuild filter still work out '
             'what they would add to the allocation-candidate query or '
             'refuse, and log it once per request at INFO ("image-type-'
             'filter log-only: server UUID: would add: ...", "... would '
             'refuse: ...", "... would change nothing"), but change no '
             'request and refuse no host. Nova\'s own options '
             '(``query_placement_for_image_type_support``, '
             '``image_metadata_prefilter``, '
             '``enable_isolated_aggregate_filtering``) keep working as Nova '
             'documents them. nova-scheduler still creates the reserved '
             'traits of ``[image_isolation] rules`` in Placement at '
             'start-up. ``image-type-filter candidates`` and the demo '
             'always apply the filters.'),
    cfg.StrOpt(
        'unknown_format',
        default=IGNORE,
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
        default=10.0,
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


def list_opts():
    return {image_type_filter_group: image_type_filter_opts}
