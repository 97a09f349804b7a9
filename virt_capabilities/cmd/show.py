"""``virt-capabilities show``: the formats a nova.conf implies, offline."""

from cliff import show

from image_type_common import cli
from virt_capabilities import conf as vc_conf
from virt_capabilities import drivers

COLUMNS = ('compute_driver', 'formats', 'traits', 'excluded')


class Show(show.ShowOne):
    """Show the image formats and traits this node's nova.conf implies.

    Reads only the config files; talks to no service.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        cli.add_config_argument(parser, required=True)
        return parser

    def take_action(self, parsed_args):
        conf = vc_conf.load(parsed_args.config_file)
        caps = drivers.capabilities_from_conf(conf).as_dict()
        return COLUMNS, tuple(
            cli.ListColumn(caps[c]) if isinstance(caps[c], list) else caps[c]
            for c in COLUMNS)
