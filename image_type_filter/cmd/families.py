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

"""``--family``: image-metadata families a command treats as enabled."""

from image_type_common import image_metadata

ALL = 'all'


def add_argument(parser, purpose):
    parser.add_argument(
        '--family', action='append', default=None,
        choices=image_metadata.NAMES + (ALL,),
        help='Treat this image-metadata family as enabled, to %s before '
             'it is (repeatable; "all" for every one). Default: the '
             'families [image_metadata_prefilter] enables in the config '
             'files.' % purpose)


def chosen(parsed_args, configured):
    """The families asked for, else those configured; in catalogue order
    and each once."""
    names = parsed_args.family or configured
    if ALL in names:
        return image_metadata.NAMES
    return tuple(n for n in image_metadata.NAMES if n in names)
