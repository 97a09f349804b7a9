"""``image-type-filter status``: upgrade readiness for the filter."""

from cliff import command

from image_type_common import cli
from image_type_filter.cmd import common
from image_type_filter.diagnostics import readiness
from image_type_filter.diagnostics import survey


class Status(command.Command):
    """Check whether it is safe to enable filter_hosts_by_image_type_support.

    Lists compute nodes (root providers with VCPU inventory) that report no
    COMPUTE_IMAGE_TYPE_* trait, how many hosts boot each format, and the
    formats no host boots.

    Exit codes: 0 every compute node reports (safe to enable); 1 warnings
    only; 2 some compute nodes report nothing (enabling the filter now would
    send no boot to them).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        cli.add_config_argument(parser)
        cli.add_cloud_argument(parser)
        common.add_format_argument(parser)
        return parser

    def take_action(self, parsed_args):
        conf, client = common.client_from_args(parsed_args)
        fleet = survey.take(client)
        checks = readiness.check(client, fleet,
                                 conf.scheduler.image_type_trait_parameter)
        code = readiness.exit_code(checks)
        per_format = fleet.hosts_per_format()
        result = {
            'result': readiness.NAMES[code],
            'checks': [c.as_dict() for c in checks],
            'compute_nodes': len(fleet.hosts),
            'not_reporting': fleet.not_reporting,
            'hosts_per_format': {f: len(h) for f, h in per_format.items()},
            'unsupported_formats': sorted(f for f, h in per_format.items()
                                          if not h),
            'flat': fleet.flat,
        }
        common.emit(self.app.stdout, parsed_args, result, [
            ('Upgrade readiness: %s' % result['result'],
             ['check', 'result', 'details'],
             [(c.name, readiness.NAMES[c.code], c.details) for c in checks]),
            ('Hosts per format:', ['format', 'hosts'],
             sorted(result['hosts_per_format'].items())),
        ])
        return code
