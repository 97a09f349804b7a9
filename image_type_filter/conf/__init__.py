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

"""Options of the scheduler side, registered on an explicit ConfigOpts.

``register_opts`` is for a ConfigOpts of this project's own (the commands
and the demo). Inside nova-scheduler ``register_nova_opts`` adds
only the request filters' options to Nova's own CONF, so nova.conf alone
configures them and no second ConfigOpts has to be loaded.
"""

from image_type_common.conf import keystoneauth
from image_type_common.conf import merged_list_opts
from image_type_common.conf import register_listed
from image_type_filter.conf import image_isolation
from image_type_filter.conf import image_metadata_prefilter
from image_type_filter.conf import image_type_filter
from image_type_filter.conf import scheduler

#: The request filters' own groups.
FILTERS = (image_type_filter, image_isolation, image_metadata_prefilter)


def register_opts(conf):
    scheduler.register_opts(conf)
    register_listed(conf, FILTERS)
    keystoneauth.placement.register_opts(conf)


def register_nova_opts(conf):
    """The request filters' options, on Nova's CONF (idempotent)."""
    scheduler.register_filter_opts(conf)
    register_listed(conf, FILTERS)


def list_opts():
    """Entry point for oslo-config-generator (``oslo.config.opts``)."""
    return merged_list_opts((scheduler, *FILTERS, keystoneauth.placement))

