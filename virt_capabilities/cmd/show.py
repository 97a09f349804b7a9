"""``virt-capabilities show``: exactly what ``report`` would keep, offline."""

from cliff import show

from image_type_common import cli
from virt_capabilities import plan

COLUMNS = ('compute_driver', 'formats', 'traits', 'custom_traits',
           'image_metadata_traits', 'excluded', 'image_type_traits_owner',
           'providers')


class Show(show.ShowOne):
    """Show the traits this node's nova.conf makes report keep.

    The dry run of report's decisions: the same validation (a configuration
    report refuses, show refuses with the same message and exit code 2) and
    the same traits, custom ones included; image_metadata_traits lists
    the image-metadata traits (with the family each serves) the driver
    boots and nova-compute never writes. Reads only the config files;
    talks to no service. report --dry-run also reads the provider and
    shows what a sync would change.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        cli.add_config_argument(parser)
        parser.add_argument(
            '--provider', action='append', default=[], metavar='NAME_OR_UUID',
            help='As for report: the provider(s) report would keep.')
        return parser

    def take_action(self, parsed_args):
        result = plan.NodePlan.from_files(
            parsed_args.config_file, parsed_args.provider,
            parsed_args.config_dir).as_dict()
        return COLUMNS, tuple(
            cli.ListColumn(result[c]) if isinstance(result[c], list)
            else result[c] for c in COLUMNS)
