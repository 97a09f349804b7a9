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

"""``image-type-filter candidates``: the hosts the filter leaves, and why."""

import dataclasses
import logging

from cliff import lister

from image_type_common import cli
from image_type_common import exceptions
from image_type_common import text
from image_type_filter import exceptions as filter_exceptions
from image_type_filter import settings
from image_type_filter.client import request_spec as rs
from image_type_filter.client import scheduler_client
from image_type_filter.cmd import common
from image_type_filter.cmd import families
from image_type_filter.diagnostics import explain
from image_type_filter.diagnostics import nova_input
from image_type_filter.diagnostics import survey

LOG = logging.getLogger(__name__)
#: Exit code when Placement offers no host at all (the reason is on stderr).
NO_VALID_HOST = 3


class Candidates(cli.AnswersWithExitCode, common.ConnectsLikeNova,
                 lister.Lister):
    """List the hosts Placement offers for an image, with the filter on.

    With --explain, every compute host that was left out is listed too,
    with the reason: it lacks the image's trait (and which formats it does
    boot), has a forbidden trait, or lacks capacity for a resource class
    (with what it has free); a trait an image property asked for is named
    with the property and its family. The image-type filter is on for this
    command whatever the config file says; other options
    ([image_type_filter], [image_isolation], [image_metadata_prefilter],
    [scheduler_client], or --family) come from --config-file.

    Input Glance or Nova would refuse, drop or ignore is a WARNING naming
    it (with --strict, exit 2 before anything is asked): a disk format
    Glance does not know, an image property Nova has no field for (or
    spelt in another case), trait:X with a value other than exactly
    "required", a value Nova refuses for an image-metadata property, and an
    [image_isolation] rule nova-scheduler would refuse at start-up.

    Exit codes: 0 hosts found; 3 no valid host (the reason on stderr, as
    Nova would put it in the server's fault); 1 Placement (or Keystone)
    error; 2 bad configuration, credentials or usage.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_connection_arguments(parser, self)
        parser.add_argument('--disk-format', required=True, metavar='FMT',
                            help='The image\'s disk_format.')
        parser.add_argument('--resources', default=common.DEFAULT_RESOURCES,
                            help='Requested resources, CLASS=AMOUNT,... '
                                 '(default %(default)s).')
        parser.add_argument('--volume-backed', action='store_true',
                            help='Boot from volume: the disk_format does not '
                                 'constrain the host (the image properties '
                                 'still do, as the volume\'s image '
                                 'metadata), and no DISK_GB is asked for '
                                 '(as Nova asks).')
        parser.add_argument('--image-property', action='append', default=[],
                            metavar='KEY=VALUE',
                            help='An image property (repeatable): for '
                                 '[image_isolation] rules, the '
                                 'image-metadata families (hw_disk_bus=scsi) '
                                 'and trait:CUSTOM_X=required, which Nova '
                                 'always honours.')
        families.add_argument(parser, 'see what it would do')
        parser.add_argument('--explain', action='store_true',
                            help='Also list left-out hosts and why.')
        parser.add_argument('--strict', action='store_true',
                            help='Refuse (exit 2) input Glance or Nova '
                                 'would refuse, drop or ignore, instead of '
                                 'warning about it.')
        return parser

    def take_action(self, parsed_args):
        resources = common.parse_resources(parsed_args.resources)
        properties = parse_properties(parsed_args.image_property)
        disk_format = parsed_args.disk_format.strip()  # as Glance stores it
        conf, client = self.conf_and_client(parsed_args)
        read = settings.ClientSettings.from_conf(conf)
        check_as_nova_would(disk_format, properties,
                            read.filters.isolation_rules, parsed_args.strict)
        # The image-type filter is on here, whatever the file says.
        read = dataclasses.replace(read, filters=dataclasses.replace(
            read.filters, image_type_enabled=True,
            image_metadata_families=families.chosen(
                parsed_args, read.filters.image_metadata_families)))
        sched = scheduler_client.SchedulerClient(client, read)
        if parsed_args.volume_backed:
            # As Nova asks for a volume-backed server: no root disk.
            resources.pop('DISK_GB', None)
        common.check_resource_classes(client, resources)
        spec = rs.RequestSpec.for_boot(
            disk_format, resources, is_bfv=parsed_args.volume_backed,
            properties=properties)
        refused = None
        try:
            found = sched.get_candidates(spec)
        except filter_exceptions.NoValidHost as exc:
            # A filter knows why before asking (a format no host boots, a
            # reserved trait nobody carries, reject of an unknown format).
            refused, found = exc, scheduler_client.Candidates([], '', [])
        def describe(trait):
            return sched.pipeline.describe_trait(trait, spec)
        fleet = verdicts = None
        if parsed_args.explain or not found.provider_uuids:
            fleet = survey.take(client)
        if parsed_args.explain:
            verdicts = explain.explain(client, fleet, spec,
                                       set(found.provider_uuids), describe)
        if not found.provider_uuids:
            LOG.error('No valid host: %s', refused or
                      explain.no_valid_host_reason(
                          client, fleet, spec, describe, verdicts))
            self.exit_code = NO_VALID_HOST
        if not parsed_args.explain:
            names = {rp['uuid']: rp['name']
                     for rp in client.list_resource_providers()}
            return ('name', 'uuid'), sorted(
                (names.get(u, u), u) for u in found.provider_uuids)
        return ('name', 'uuid', 'result', 'reasons'), [
            (v.name, v.uuid, v.result, cli.ListColumn(v.reasons))
            for v in verdicts]


def check_as_nova_would(disk_format, properties, rules, strict):
    """Warn about (or, strict, refuse) what Glance or Nova would refuse,
    drop or ignore: one sentence per input."""
    problems = (nova_input.disk_format_problems(disk_format)
                + nova_input.property_problems(
                    properties, nova_input.rule_keys(rules))
                + nova_input.rule_problems(rules))
    if strict and problems:
        raise exceptions.ConfigError('--strict: %s' % '; '.join(problems))
    for problem in problems:
        LOG.warning('%s', problem)


def parse_properties(items):
    properties = {}
    for item in items:
        key, sep, value = item.partition('=')
        if not sep or not key.strip():
            raise exceptions.ConfigError(
                '--image-property: %s is not KEY=VALUE'
                % text.safe_repr(item))
        properties[key.strip()] = value.strip()
    return properties
