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

"""``virt-capabilities remove``: undo what this reporter set."""

import functools

from cliff import command

from image_type_common.cli import roles
from virt_capabilities import service
from virt_capabilities.cmd import report


class Remove(command.Command):
    """Remove exactly the traits this reporter set, and its records.

    For uninstalling the reporter, or moving a node's traits to another
    owner: stop the service first (its next cycle would put them back), then
    run remove with the same config files (and --provider) it ran with. It
    takes off each provider what this reporter's records in the state file
    say it set (its custom traits, and the image-metadata traits it added),
    never a trait another reporter's record holds and never nova-compute's;
    then it forgets its records (a state file left with no reporter's
    record says a remove emptied it) and deletes its status file. Run
    again, it finds nothing left, writes nothing and exits 0. With
    image_type_traits_owner
    = reporter it also removes the COMPUTE_IMAGE_TYPE_* traits it keeps on
    its providers: where nova-compute runs, it reports its own again at its
    next update. Prints nothing; its log says what was removed.

    Exit codes: 0 done; 1 Placement error after retries, a provider not
    found, or a state file that cannot be saved (run it again: what is
    done stays done); 2 bad configuration or usage (no state file, or,
    with custom or image-metadata traits configured, a state file that does
    not exist: nothing is known to be its own, and nothing is changed), or
    credentials refused.
    """

    _epilog = roles.epilog('virt-capabilities', 'remove')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        report.add_node_arguments(parser, provider_help=(
            'With image_type_traits_owner = reporter: the provider whose '
            'image-type traits to remove, as for report (the records name '
            'their own providers). ' + report.PROVIDER_HELP.split(
                '(repeatable). ', 1)[1]))
        return parser

    def take_action(self, parsed_args):
        return service.run_remove(functools.partial(
            service.ReportJob, parsed_args.config_file, parsed_args.provider,
            parsed_args.os_cloud, config_dirs=parsed_args.config_dir,
            for_removal=True))
