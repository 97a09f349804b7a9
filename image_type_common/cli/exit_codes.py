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

"""Commands whose exit code is part of their answer."""

from image_type_common import exceptions


class AnswersWithExitCode:
    """Mixin for a cliff command whose exit code is part of its answer.

    ``take_action`` sets ``self.exit_code`` (a readiness check that prints
    its table and answers 2); one of this project's errors becomes its own
    exit code and one line. Both hold under any cliff App, the
    ``openstack`` client's included; with ``--debug`` errors propagate for
    the traceback.
    """

    exit_code = 0

    def run(self, parsed_args):
        self.exit_code = 0
        try:
            result = super().run(parsed_args)
        except exceptions.Error as exc:
            if getattr(self.app.options, 'debug', False):
                raise
            self.app.LOG.error('%s', exc)
            return exc.exit_code
        return result or self.exit_code
