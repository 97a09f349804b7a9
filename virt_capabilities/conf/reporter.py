"""[virt_capabilities] options of the trait reporter itself."""

from oslo_config import cfg

from image_type_common.conf.groups import fresh_group

reporter_group = cfg.OptGroup(
    'virt_capabilities', title='Trait reporter options',
    help='How the reporter keeps its traits on the resource provider.')

reporter_opts = [
    cfg.ListOpt(
        'custom_traits',
        default=[],
        help='CUSTOM_* traits this node carries, for example ``CUSTOM_TROVE`` '
             'on nodes set aside for Trove. The reporter creates them in '
             'Placement when missing and owns them like the image-type '
             'traits: a trait dropped from this list is removed from the '
             'provider on the next sync, and no other trait is touched. '
             'Names must match ``CUSTOM_[A-Z0-9_]+``.'),
    cfg.StrOpt(
        'state_file',
        default='$state_path/virt_capabilities.json',
        help='Where the reporter remembers which custom traits it set on '
             'which provider, so that a trait dropped from '
             '``custom_traits`` is removed even after a restart.'),
    cfg.IntOpt(
        'conflict_retries',
        default=8,
        min=0,
        help='How many times one sync re-reads and retries a provider after '
             'a 409 generation conflict (another writer changed it between '
             'our read and our write), with jittered back-off.'),
]


def register_opts(conf):
    conf.register_group(fresh_group(reporter_group))
    conf.register_opts(reporter_opts, group=reporter_group.name)


def list_opts():
    return {reporter_group: reporter_opts}
