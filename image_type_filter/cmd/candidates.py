"""``image-type-filter candidates``: the hosts the filter leaves, and why."""

from cliff import lister

from image_type_common import cli
from image_type_common import exceptions
from image_type_filter.cmd import common
from image_type_filter.diagnostics import explain
from image_type_filter.diagnostics import survey
from image_type_filter.scheduler import request_spec as rs
from image_type_filter.scheduler import scheduler_client


class Candidates(lister.Lister):
    """List the hosts Placement offers for an image, with the filter on.

    With --explain, every compute host that was left out is listed too,
    with the reason: it lacks the image's trait (and which formats it does
    boot), has a forbidden trait, or lacks capacity. The image-type filter
    is on for this command whatever the config file says; other options
    ([scheduler], [image_isolation]) come from --config-file.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        cli.add_config_argument(parser)
        cli.add_cloud_argument(parser)
        parser.add_argument('--disk-format', required=True, metavar='FMT',
                            help='The image\'s disk_format.')
        parser.add_argument('--resources', default=common.DEFAULT_RESOURCES,
                            help='Requested resources, CLASS=AMOUNT,... '
                                 '(default %(default)s).')
        parser.add_argument('--volume-backed', action='store_true',
                            help='Boot from volume: the image does not '
                                 'constrain the host.')
        parser.add_argument('--image-property', action='append', default=[],
                            metavar='KEY=VALUE',
                            help='An image property (repeatable), for '
                                 '[image_isolation] rules.')
        parser.add_argument('--explain', action='store_true',
                            help='Also list left-out hosts and why.')
        return parser

    def take_action(self, parsed_args):
        resources = common.parse_resources(parsed_args.resources)
        properties = parse_properties(parsed_args.image_property)
        conf, client = common.client_from_args(parsed_args)
        conf.set_override('filter_hosts_by_image_type_support', True,
                          'scheduler')
        sched = scheduler_client.SchedulerClient(client, conf)
        spec = rs.RequestSpec.for_boot(
            parsed_args.disk_format, resources,
            is_bfv=parsed_args.volume_backed, properties=properties)
        found = sched.get_candidates(spec)
        if not parsed_args.explain:
            names = {rp['uuid']: rp['name']
                     for rp in client.list_resource_providers()}
            return ('name', 'uuid'), sorted(
                (names.get(u, u), u) for u in found.provider_uuids)
        fleet = survey.take(client)
        verdicts = explain.explain(client, fleet, spec,
                                   set(found.provider_uuids),
                                   sched.pipeline.describe_trait)
        return ('name', 'uuid', 'result', 'reasons'), [
            (v.name, v.uuid, v.result, cli.ListColumn(v.reasons))
            for v in verdicts]


def parse_properties(items):
    properties = {}
    for item in items:
        key, sep, value = item.partition('=')
        if not sep or not key.strip():
            raise exceptions.ConfigError(
                '--image-property: %r is not KEY=VALUE' % item)
        properties[key.strip()] = value.strip()
    return properties
