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

"""The ``openstack`` client plugin: ``openstack image-type candidates|status``.

The same commands, flags, output and exit codes as ``image-type-filter``;
Placement, Nova and Glance are reached through the openstack client's own
session unless ``--config-file`` sets ``[placement] auth_type``.
The commands authenticate themselves (``auth_required = False``), so a
credentials problem is one line and exit 2, as everywhere.
"""

import logging

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc
from osc_lib import utils as osc_utils

from image_type_common import connection
from image_type_common import exceptions
from image_type_common import library_logs
from image_type_common import text
from image_type_common import tls
from image_type_common.cli import column_types
from image_type_common.conf import loading
from image_type_filter import conf as itf_conf
from image_type_filter.cmd import candidates
from image_type_filter.cmd import status
from image_type_filter.diagnostics.nova_side import cloud

LOG = logging.getLogger(__name__)

# What the openstack client asks of a plugin module.
API_NAME = 'image_type'
API_VERSION_OPTION = 'os_image_type_api_version'
DEFAULT_API_VERSION = '1'
API_VERSIONS = {'1': 'image_type_common.placement_client.PlacementClient'}


def make_client(instance):
    """A PlacementClient on the openstack client's own session."""
    return connection.client(adapter.Adapter(
        session=instance.session, service_type='placement',
        interface=instance.interface, region_name=instance.region_name),
        tls.OPENSTACK_CLIENT)


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
    #: The openstack client would authenticate before the command runs,
    #: and end a failure with its own message and exit 1.
    auth_required = False

    def conf_and_client(self, parsed_args):
        # What our own App sets up when it starts, on the openstack
        # client's App.
        library_logs.quiet_libraries(self.app.options)
        column_types.register_yaml()
        conf = loading.load(parsed_args.config_file,
                            itf_conf.register_opts,
                            config_dirs=parsed_args.config_dir)
        if conf.placement.auth_type:
            return conf, connection.client_for(conf)
        return conf, self._openstack_client()

    def _openstack_client(self):
        """Authenticate as the openstack client does before a command that
        needs it, with its failures made ours."""
        self.auth_required = True
        try:
            self.app.prepare_to_run_command(self)
            return self.app.client_manager.image_type
        except ks_exc.ClientException as exc:
            cloud = getattr(self.app, 'cloud', None)
            auth = getattr(cloud, 'config', {}).get('auth') or {}
            raise connection.keystone_error(
                exc, auth.get('auth_url'),
                settings=tls.OPENSTACK_CLIENT) from exc
        except Exception as exc:
            # osc-lib's and keystoneauth1's option errors (a missing
            # auth_url, an unknown auth type) have no common base.
            raise exceptions.ConfigError(
                'openstack client credentials: %s' % text.one_line(exc)
            ) from exc
        finally:
            self.auth_required = False


class Candidates(_OnTheOpenstackClient, candidates.Candidates):
    __doc__ = candidates.Candidates.__doc__

    def cloud_apis(self, parsed_args):
        """Nova and Glance on the openstack client's own session."""
        self._openstack_client()
        manager = self.app.client_manager
        return cloud.on_session(manager.session, interface=manager.interface,
                                region_name=manager.region_name,
                                settings=tls.OPENSTACK_CLIENT)


class Status(_OnTheOpenstackClient, status.Status):
    __doc__ = status.Status.__doc__
