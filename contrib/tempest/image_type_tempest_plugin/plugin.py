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

"""Tempest's entry point: where the tests are and which options they read."""

import os

from tempest.test_discover import plugins

from image_type_tempest_plugin import config


class ImageTypeTempestPlugin(plugins.TempestPlugin):

    def load_tests(self):
        base_path = os.path.dirname(os.path.dirname(os.path.abspath(
            __file__)))
        return (os.path.join(base_path, 'image_type_tempest_plugin',
                             'tests'), base_path)

    def register_opts(self, conf):
        conf.register_group(config.group)
        conf.register_opts(config.opts, group=config.group)

    def get_opt_lists(self):
        return [(config.group.name, config.opts)]
