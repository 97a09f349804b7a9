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

"""What the image-type-filter commands share: config and arguments."""

import re

from image_type_common import exceptions
from image_type_common import image_metadata
from image_type_common import text as text_mod
from image_type_common.cli import arguments
from image_type_filter import conf as itf_conf

RESOURCE = re.compile(r'^([A-Z0-9_]+)=([0-9]+)$')
DEFAULT_RESOURCES = 'VCPU=1,MEMORY_MB=512,DISK_GB=5'
#: --family's name for every image-metadata family.
ALL_FAMILIES = 'all'


class ConnectsLikeNova:
    """Commands that read nova.conf's options and reach Placement through
    its ``[placement]`` section, ``--os-cloud`` or ``OS_*``. The
    ``openstack`` client plugin's commands override ``conf_and_client`` to
    use the client's own session instead."""

    #: Whether the command takes --os-cloud itself (openstack has its own).
    takes_os_cloud = True

    def conf_and_client(self, parsed_args):
        """(conf, PlacementClient)."""
        return arguments.client_from_args(parsed_args,
                                          register=itf_conf.register_opts)


def add_connection_arguments(parser, command, cloud_also=''):
    """--config-file, --config-dir and (unless the openstack client has
    its own) --os-cloud; ``cloud_also``: what else --os-cloud reaches."""
    arguments.add_config_argument(parser)
    if command.takes_os_cloud:
        arguments.add_cloud_argument(parser, cloud_also)


def add_family_argument(parser, purpose):
    """``--family``: image-metadata families the command treats as
    enabled."""
    parser.add_argument(
        '--family', action='append', default=None,
        choices=image_metadata.NAMES + (ALL_FAMILIES,),
        help='Treat this image-metadata family as enabled, to %s before '
             'it is (repeatable; "all" for every one). Default: the '
             'families [image_metadata_prefilter] enables in the config '
             'files.' % purpose)


def chosen_families(parsed_args, configured):
    """The families asked for, else those configured; in catalogue order
    and each once."""
    names = parsed_args.family or configured
    if ALL_FAMILIES in names:
        return image_metadata.NAMES
    return tuple(n for n in image_metadata.NAMES if n in names)


#: Placement's largest amount (a signed 32-bit integer).
MAX_AMOUNT = 2 ** 31 - 1


def parse_resources(text):
    """CLASS=AMOUNT,...: each class once, amounts Placement can take."""
    resources = {}
    for item in filter(None, (i.strip() for i in text.split(','))):
        match = RESOURCE.match(item)
        if not match or not 1 <= int(match.group(2)) <= MAX_AMOUNT:
            raise exceptions.ConfigError(
                '--resources: %s is not CLASS=AMOUNT with an amount from 1 '
                'to %d (e.g. %s)' % (text_mod.safe_repr(item), MAX_AMOUNT,
                                     DEFAULT_RESOURCES))
        if match.group(1) in resources:
            raise exceptions.ConfigError(
                '--resources: %s is given twice' % match.group(1))
        resources[match.group(1)] = int(match.group(2))
    if not resources:
        raise exceptions.ConfigError('--resources is empty')
    return resources

