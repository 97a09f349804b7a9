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

"""A parsed ConfigOpts of the scheduler side's options, for the tests."""

from oslo_config import cfg

from image_type_filter import conf as itf_conf


def new_conf(**overrides):
    """A parsed ConfigOpts of these options, with overrides.

    Keys are ``group__option``, for example
    ``new_conf(scheduler__filter_hosts_by_image_type_support=True)``.
    """
    conf = cfg.ConfigOpts()
    itf_conf.register_opts(conf)
    conf([])
    for key, value in overrides.items():
        group, _, name = key.partition('__')
        conf.set_override(name, value, group)
    return conf
