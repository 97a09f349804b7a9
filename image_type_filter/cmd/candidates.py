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
from urllib import parse

from cliff import lister

from image_type_common import exceptions
from image_type_common import text
from image_type_common.cli import app
from image_type_common.cli import column_types
from image_type_common.cli import roles
from image_type_filter import exceptions as filter_exceptions
from image_type_filter import settings
from image_type_filter.cmd import common
from image_type_filter.diagnostics import our_filters
from image_type_filter.diagnostics import survey
from image_type_filter.diagnostics import verdicts
from image_type_filter.diagnostics.nova_side import as_scheduler
from image_type_filter.diagnostics.nova_side import cloud
from image_type_filter.diagnostics.nova_side import nova_input
from image_type_filter.scheduler import pipeline as filter_pipeline

LOG = logging.getLogger(__name__)
#: Exit code when Placement offers no host at all (the reason is on stderr).
NO_VALID_HOST = 3
#: take_action's column names for the --server/--image/--flavor document.
DOCUMENT = ('query', 'queries', 'parameters', 'nova', 'subject',
            'request_filters', 'not_covered', 'explains', 'placement',
            'no_valid_host', 'hosts')
WHOLE_DOCUMENT = ('json', 'yaml')
HOST_COLUMNS = ('name', 'uuid', 'result', 'reasons')


class Candidates(app.AnswersWithExitCode, common.ConnectsLikeNova,
                 lister.Lister):
    """List the hosts Placement offers for a boot, and why the others not.

    For a real server (--server, in ERROR or ACTIVE), an image (--image),
    a flavor (--flavor) or both, it asks Placement the query
    nova-scheduler asks, built by Nova's own code after Nova's request
    filters: it runs where Nova is installed (the scheduler's host), with
    nova-scheduler's nova.conf given with --config-file, and reads the
    server, the image and the compute services with your own cloud
    credentials (--os-cloud, clouds.yaml or OS_*; admin role). Every
    compute host is judged, the term of the query that left it out
    named; nova-scheduler's host filters are not run. -f json gives the
    queries, the request filters and a verdict per host.

    With --disk-format instead, it asks for an image of that format with
    this project's filters only ([image_isolation] and
    [image_metadata_prefilter] from --config-file, or --family) and
    --resources; --explain judges each host left out as --server does.
    Input Glance or Nova would refuse, drop or ignore is a WARNING naming
    it (with --strict, exit 2 before anything is asked).

    What each mode reads, asks and explains: "Troubleshooting 'No valid
    host'" in the documentation (Administration).

    Exit codes: 0 hosts found; 3 no valid host (the reason on stderr, as
    Nova would put it in the server's fault); 1 Placement, Nova, Glance
    (or Keystone) error; 2 bad configuration, credentials or usage, no
    such server, image or flavor, or (--server, --image, --flavor) no Nova
    to import or no nova.conf.
    """

    _epilog = roles.epilog('image-type-filter', 'candidates')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_connection_arguments(
            parser, self, cloud_also='; with --server, --image or --flavor '
            'it also reads the server and the compute services from Nova '
            'and the image from Glance (always through openstacksdk: this '
            'entry, else OS_*)')
        what = parser.add_mutually_exclusive_group()
        what.add_argument('--server', metavar='NAME_OR_ID',
                          help='A server (any status): its boot\'s query.')
        what.add_argument('--disk-format', metavar='FMT',
                          help='The image\'s disk_format, for this '
                               'project\'s filters alone.')
        parser.add_argument('--image', metavar='NAME_OR_ID',
                            help='A Glance image: the query of its boot '
                                 '(with --flavor, or a flavor of '
                                 '--resources). Not with --server or '
                                 '--disk-format.')
        parser.add_argument('--flavor', metavar='NAME_OR_ID',
                            help='A Nova flavor: the query of its boot '
                                 '(with --image, or with no image). Not '
                                 'with --server or --disk-format.')
        nova = parser.add_argument_group(
            'nova-scheduler', 'For --server, --image and --flavor, which '
            'need Nova installed and nova-scheduler\'s nova.conf '
            '(--config-file).')
        nova.add_argument('--availability-zone', metavar='AZ',
                          help='The availability zone the boot asks for '
                               '(--image/--flavor; a server\'s own is '
                               'read).')
        nova.add_argument('--project', metavar='PROJECT_ID',
                          help='The project that boots (--image/--flavor; '
                               'default: your token\'s; a server\'s own '
                               'is read).')
        parser.add_argument('--resources', default=common.DEFAULT_RESOURCES,
                            help='Requested resources, CLASS=AMOUNT,... '
                                 '(default %(default)s): with '
                                 '--disk-format, or --image without '
                                 '--flavor.')
        parser.add_argument('--volume-backed', action='store_true',
                            help='Boot from volume (--disk-format): the '
                                 'disk_format does not constrain the host '
                                 '(the image properties still do, as the '
                                 'volume\'s image metadata), and no '
                                 'DISK_GB is asked for (as Nova asks).')
        parser.add_argument('--image-property', action='append', default=[],
                            metavar='KEY=VALUE',
                            help='An image property (repeatable; '
                                 '--disk-format): for [image_isolation] '
                                 'rules, the image-metadata families '
                                 '(hw_disk_bus=scsi) and '
                                 'trait:CUSTOM_X=required, which Nova '
                                 'always honours.')
        common.add_family_argument(
            parser, 'see what it would do (--disk-format)')
        parser.add_argument('--explain', action='store_true',
                            help='Also list left-out hosts and why '
                                 '(--disk-format; the other modes always '
                                 'do).')
        parser.add_argument('--strict', action='store_true',
                            help='Refuse (exit 2) input Glance or Nova '
                                 'would refuse, drop or ignore, instead of '
                                 'warning about it (--disk-format).')
        return parser

    def take_action(self, parsed_args):
        self.check_arguments(parsed_args)
        if _nova_mode(parsed_args):
            return self.as_nova_scheduler(parsed_args)
        return self.with_our_filters(parsed_args)

    def check_arguments(self, parsed_args):
        """What argparse cannot refuse, refused before anything is read
        (ConfigError, exit 2): a mode, options of the other mode, and
        --resources and --image-property that are not CLASS=AMOUNT and
        KEY=VALUE."""
        common.parse_resources(parsed_args.resources)
        if not _nova_mode(parsed_args):
            if parsed_args.disk_format is None:
                raise exceptions.ConfigError(
                    'give --server, --image, --flavor or --disk-format')
            _only_with(parsed_args, '--server, --image or --flavor',
                       availability_zone=None, project=None)
            parse_properties(parsed_args.image_property)
            return
        if parsed_args.server and (parsed_args.image or parsed_args.flavor):
            raise exceptions.ConfigError(
                '--server reads its own image and flavor: not with --image '
                'or --flavor')
        if parsed_args.disk_format:
            raise exceptions.ConfigError(
                '--disk-format is for this project\'s filters alone: not '
                'with --image or --flavor')
        _only_with(parsed_args, '--disk-format', volume_backed=False,
                   image_property=[], family=None, strict=False)

    # -- --server, --image, --flavor --------------------------------------

    def as_nova_scheduler(self, parsed_args):
        # First: without Nova, ask nothing.
        ctxt = as_scheduler.load_nova(parsed_args.config_file,
                                      parsed_args.config_dir)
        _, placement = self.conf_and_client(parsed_args)
        nova_and_glance = self.cloud_apis(parsed_args)
        server, notes = None, []
        if parsed_args.server:
            server, spec = as_scheduler.for_server(ctxt, nova_and_glance,
                                                   parsed_args.server)
        else:
            if not parsed_args.flavor:
                notes.append('no --flavor: a flavor of %s, no extra specs'
                             % parsed_args.resources)
            if not parsed_args.image:
                notes.append('no --image: a boot whose image asks nothing')
            spec = as_scheduler.for_image_and_flavor(
                ctxt, nova_and_glance, parsed_args.image, parsed_args.flavor,
                common.parse_resources(parsed_args.resources),
                parsed_args.availability_zone,
                parsed_args.project or nova_and_glance.project_id())
        document = as_scheduler.explain(
            ctxt, spec, nova_and_glance, placement, ', '.join(
                parsed_args.config_file + parsed_args.config_dir), server,
            notes)
        if document['no_valid_host']:
            LOG.error('No valid host: %s', document['no_valid_host'])
            self.exit_code = NO_VALID_HOST
        return DOCUMENT, document

    def cloud_apis(self, parsed_args):
        """Nova and Glance through openstacksdk: --os-cloud, else OS_*."""
        return cloud.from_openstacksdk(parsed_args.os_cloud)

    def produce_output(self, parsed_args, column_names, data):
        if column_names is not DOCUMENT:
            return super().produce_output(parsed_args, column_names, data)
        return emit_document(self.formatter, self.app.stdout, parsed_args,
                             data)

    # -- --disk-format ------------------------------------------------------

    def with_our_filters(self, parsed_args):
        resources = common.parse_resources(parsed_args.resources)
        properties = parse_properties(parsed_args.image_property)
        disk_format = parsed_args.disk_format.strip()  # as Glance stores it
        conf, client = self.conf_and_client(parsed_args)
        read = settings.FilterSettings.from_conf(conf)
        check_as_nova_would(disk_format, properties, read.isolation_rules,
                            parsed_args.strict)
        # The image-type filter is on here, whatever the file says.
        pipeline = filter_pipeline.RequestFilterPipeline.from_settings(
            dataclasses.replace(
                read, image_type_enabled=True,
                image_metadata_families=common.chosen_families(
                    parsed_args, read.image_metadata_families)),
            placement=client)
        if parsed_args.volume_backed:
            # As Nova asks for a volume-backed server: no root disk.
            resources.pop('DISK_GB', None)
        # One request: every class must be one Placement knows.
        unknown = sorted(set(resources) - client.list_resource_classes())
        if unknown:
            raise exceptions.ConfigError(
                '--resources: Placement knows no resource class %s'
                % ', '.join(unknown))
        spec = our_filters.RequestSpec.for_boot(
            disk_format, resources, is_bfv=parsed_args.volume_backed,
            properties=properties)
        refused = None
        try:
            found = our_filters.get_candidates(client, pipeline, spec)
        except filter_exceptions.NoValidHost as exc:
            # A filter knows why before asking (a format no host boots, a
            # reserved trait nobody carries, reject of an unknown format).
            refused, found = exc, our_filters.Candidates([], '', [])
        judged = None
        if parsed_args.explain or not (found.provider_uuids or refused):
            fleet = survey.take(client)
            # The query sent, or the one the spec would send when a request
            # filter refused the request before Placement was asked.
            query = verdicts.Query.parse(our_filters.build(spec))
            judged = verdicts.judge(
                client, fleet, [query], set(found.provider_uuids),
                why=lambda trait: pipeline.describe_trait(trait, spec))
        if not found.provider_uuids:
            LOG.error('No valid host: %s', refused or
                      verdicts.no_valid_host_reason(client, fleet, spec,
                                                    judged))
            self.exit_code = NO_VALID_HOST
        if not parsed_args.explain:
            names = {rp['uuid']: rp['name']
                     for rp in client.list_resource_providers()}
            return ('name', 'uuid'), sorted(
                (names.get(u, u), u) for u in found.provider_uuids)
        return ('name', 'uuid', 'result', 'reasons'), [
            (v.name, v.uuid, v.result, column_types.ListColumn(v.reasons))
            for v in judged]


def _nova_mode(parsed_args):
    """Whether the command asks as nova-scheduler (a server, an image or a
    flavor) rather than with this project's filters (--disk-format)."""
    return bool(parsed_args.server or parsed_args.image or
                parsed_args.flavor)


def _only_with(parsed_args, mode, **unset):
    """A ConfigError naming the options given that only ``mode`` takes
    (``unset``: option -> its value when not given)."""
    given = ['--' + name.replace('_', '-') for name, default in
             unset.items() if getattr(parsed_args, name) != default]
    if given:
        raise exceptions.ConfigError('%s: only with %s' % (
            ', '.join(given), mode))


def emit_document(formatter, stdout, parsed_args, document):
    """json and yaml: the whole document. table: the queries and their
    parameters, the request filters, the hosts and what is not covered.
    value and csv: the hosts table alone. -c picks columns of the hosts
    table."""
    if parsed_args.formatter in WHOLE_DOCUMENT:
        if parsed_args.columns:
            raise exceptions.ConfigError(
                '-c picks columns of the hosts table; -f %s gives the whole '
                'document' % parsed_args.formatter)
        formatter.emit_one(DOCUMENT, [document[k] for k in DOCUMENT],
                           stdout, parsed_args)
        return 0
    columns = list(HOST_COLUMNS)
    if parsed_args.columns:
        unknown = [c for c in parsed_args.columns if c not in columns]
        if unknown:
            raise exceptions.ConfigError(
                '-c: the hosts table has no column %s; its columns are %s'
                % (', '.join(unknown), ', '.join(columns)))
        columns = [c for c in columns if c in parsed_args.columns]
    hosts = [[{'reasons': column_types.ListColumn(h['reasons'])}.get(c, h[c])
              for c in columns] for h in document['hosts']]
    if parsed_args.formatter != 'table':
        formatter.emit_list(columns, hosts, stdout, parsed_args)
        return 0
    nova = document['nova']
    stdout.write('Nova %s; options from %s; this project\'s filters %s\n'
                 % (nova['version'], nova['options_from'],
                    'loaded' if nova['image_type_filter_loaded']
                    else 'not loaded'))
    for note in document['subject']['notes']:
        stdout.write('Note: %s\n' % note)
    if document['queries']:
        stdout.write('\nThe %s nova-scheduler sends:\n%s' % (
            'query' if len(document['queries']) == 1 else
            'queries (hw:cpu_policy=dedicated: PCPU, then VCPU; it offers '
            'the hosts of both)', ''.join(
                'GET %s\n' % parse.unquote(url)
                for url in document['queries'])))
        formatter.emit_list(('query', 'parameter', 'value'), [
            (p['query'], p['parameter'], p['value'])
            for p in document['parameters']], stdout, parsed_args)
    stdout.write('\nNova\'s request filters (and this project\'s):\n')
    formatter.emit_list(('filter', 'result', 'detail'), [
        (f['name'], f['result'], f['detail'])
        for f in document['request_filters']], stdout, parsed_args)
    if document['hosts']:
        answered = document['placement'] or {}
        stdout.write('\nHosts (Placement offered %s; limit %s%s):\n' % (
            answered.get('hosts', 0), answered.get('limit'),
            ', reached: the answer is cut' if answered.get('truncated')
            else ''))
        formatter.emit_list(columns, hosts, stdout, parsed_args)
    stdout.write('\nNot covered: %s\n' % '; '.join(document['not_covered']))
    stdout.write('%s\n' % document['explains'])
    return 0


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
