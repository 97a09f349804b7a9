"""The ``openstack`` client plugin: ``openstack image-type candidates|status``.

The same commands, flags and output as ``image-type-filter``; credentials,
clouds.yaml and the ``--os-*`` options are the openstack client's (through
osc-lib, which it brings), and Placement is reached through its session.
``--config-file`` still reads nova.conf's ``[scheduler]`` and
``[image_isolation]`` options.
"""

import logging

from keystoneauth1 import adapter
from osc_lib import utils as osc_utils

from image_type_common import placement_client
from image_type_common.conf import loading
from image_type_filter.cmd import candidates
from image_type_filter.cmd import common
from image_type_filter.cmd import status

LOG = logging.getLogger(__name__)

# What the openstack client asks of a plugin module.
API_NAME = 'image_type'
API_VERSION_OPTION = 'os_image_type_api_version'
DEFAULT_API_VERSION = '1'
API_VERSIONS = {'1': 'image_type_common.placement_client.PlacementClient'}


def make_client(instance):
    """A PlacementClient on the openstack client's own session."""
    return placement_client.PlacementClient(adapter.Adapter(
        session=instance.session, service_type='placement',
        interface=instance.interface, region_name=instance.region_name))


def build_option_parser(parser):
    parser.add_argument(
        '--os-image-type-api-version', metavar='<version>',
        default=osc_utils.env('OS_IMAGE_TYPE_API_VERSION',
                              default=DEFAULT_API_VERSION),
        help='image-type plugin API version, default=%s (Env: '
             'OS_IMAGE_TYPE_API_VERSION)' % DEFAULT_API_VERSION)
    return parser


class _OnTheOpenstackClient:
    takes_os_cloud = False

    def conf_and_client(self, parsed_args):
        conf = loading.load(parsed_args.config_file, common.register_all,
                            config_dirs=parsed_args.config_dir)
        return conf, self.app.client_manager.image_type


class Candidates(_OnTheOpenstackClient, candidates.Candidates):
    __doc__ = candidates.Candidates.__doc__


class Status(_OnTheOpenstackClient, status.Status):
    __doc__ = status.Status.__doc__
