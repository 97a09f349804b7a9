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

"""The arguments the commands that read nova.conf or reach Placement share,
and the client they give."""

from image_type_common import connection
from image_type_common.conf import loading


def add_config_argument(parser):
    parser.add_argument(
        '--config-file', action='append', default=[], metavar='PATH',
        help='nova.conf to read (repeatable, later files win). Its '
             '[placement] section is used to reach Placement.')
    parser.add_argument(
        '--config-dir', action='append', default=[], metavar='DIR',
        help='A nova.conf.d directory: the .conf files in it are read in name '
             'order after the --config-file ones, as nova-compute reads '
             'split files such as nova-compute.conf (repeatable).')


def add_cloud_argument(parser, also=''):
    """``--os-cloud``; ``also``: the rest of what the command reaches
    with it, said after Placement."""
    parser.add_argument(
        '--os-cloud', metavar='NAME',
        help='Reach Placement through openstacksdk with this clouds.yaml '
             'entry instead of nova.conf\'s [placement] section%s. Without '
             'either, OS_* environment variables are used.' % also)


def client_from_args(parsed_args, register):
    """Load the config files (with ``register``'s options) and build a
    Placement client from them."""
    conf = loading.load(parsed_args.config_file, register,
                        config_dirs=parsed_args.config_dir)
    return conf, connection.client_for(conf, parsed_args.os_cloud)
