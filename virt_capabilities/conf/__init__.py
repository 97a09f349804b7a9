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

"""Options of the reporter (``virt-capabilities``), registered on an
explicit ConfigOpts."""

from image_type_common import exceptions
from image_type_common.conf import keystoneauth
from image_type_common.conf import loading
from image_type_common.conf import merged_list_opts
from image_type_common.conf import register_listed
from virt_capabilities import logs
from virt_capabilities.conf import nova
from virt_capabilities.conf import reporter

#: Nova's options and the reporter's, registered here from their
#: ``list_opts``; the keystoneauth1 sections register themselves.
OPTIONS = (nova, reporter)
SECTIONS = (keystoneauth.placement, keystoneauth.ironic)


def register_opts(conf):
    register_listed(conf, OPTIONS)
    for section in SECTIONS:
        section.register_opts(conf)
    logs.register_opts(conf)


def list_opts():
    """Entry point for oslo-config-generator (``oslo.config.opts``)."""
    return merged_list_opts(OPTIONS + SECTIONS)


def load(config_files, conf=None, config_dirs=()):
    """Parse a node's nova.conf files (and nova.conf.d directories)."""
    if not config_files and not config_dirs:
        raise exceptions.ConfigError(
            'give --config-file (nova.conf) or --config-dir (nova.conf.d)')
    return loading.load(config_files, register_opts, conf, config_dirs)
