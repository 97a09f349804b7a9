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

"""``image-type-filter status``: upgrade readiness for the filter."""

from cliff import lister

from image_type_common import exceptions
from image_type_common.cli import app
from image_type_common.cli import roles
from image_type_filter import settings
from image_type_filter.cmd import common
from image_type_filter.diagnostics import readiness
from image_type_filter.diagnostics import survey


class CouldNotCheck(exceptions.Error):
    """The check could not run because Placement (or Keystone) could not be
    asked: 255, nova-status's "could not check", and the line says so."""

    exit_code = readiness.COULD_NOT_CHECK


class Status(app.AnswersWithExitCode, common.ConnectsLikeNova,
             lister.Lister):
    """Check whether it is safe to enable filter_hosts_by_image_type_support.

    The same meaning as nova-status upgrade check: one row per check,
    after a first row, "Version", naming this installation's version and
    the configuration files read (run it with nova-scheduler's own).
    Compute nodes are the providers Nova marks with the COMPUTE_NODE
    trait; the "Image formats" row counts hosts per format and lists the
    formats no host boots. Each image-metadata family enabled (or named
    with --family) gets a row: compute nodes that report none of its
    traits would receive no boot of an image that sets its properties.

    A compute node that boots no image on purpose (volume-backed servers
    only) passes when it carries CUSTOM_IMAGE_TYPE_FILTER_VOLUME_ONLY,
    which virt-capabilities report keeps from [virt_capabilities]
    volume_only = True in that node's nova.conf.

    Exit codes: 0 ready (every compute node reports, or is declared
    volume-only); 1 warnings only; 2 not ready (some compute nodes report
    nothing: enabling the filter now would send them no boot), or the
    configuration, the credentials or the command line is wrong (one line
    says which); 255 the check could not run (Placement or Keystone
    unreachable or failing).
    """

    _epilog = roles.epilog('image-type-filter', 'status')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_connection_arguments(parser, self)
        common.add_family_argument(parser, 'check it')
        return parser

    def take_action(self, parsed_args):
        try:
            conf, client = self.conf_and_client(parsed_args)
            read = settings.FilterSettings.from_conf(conf)
            checks = readiness.ReadinessChecks(
                client, survey.take(client), families=common.chosen_families(
                    parsed_args, read.image_metadata_families),
                novas_metadata_prefilter=read.novas_metadata_prefilter)
            results = checks.results()
        except exceptions.ConfigError:
            # Configuration, credentials or usage: its own line and its 2,
            # as in every other command (and as argparse gives nova-status
            # for usage): something to fix, not a service to wait for.
            raise
        except exceptions.Error as exc:
            raise CouldNotCheck('could not check: %s' % exc) from exc
        self.exit_code = readiness.exit_code(results)
        read = ', '.join(parsed_args.config_file + parsed_args.config_dir) \
            or 'no file'
        return ('check', 'result', 'details'), [
            ('Version', readiness.result_name(0), 'image-type-filter %s, '
             'configuration read from %s' % (app.version(), read))] + [
            (name, readiness.result_name(result.code), result.details)
            for name, result in results]
