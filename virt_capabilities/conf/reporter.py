"""[virt_capabilities] options of the trait reporter itself."""

from oslo_config import cfg

from image_type_common.conf.groups import fresh_group

reporter_group = cfg.OptGroup(
    'virt_capabilities', title='Trait reporter options',
    help='How the reporter keeps its traits on the resource provider.')

REPORTER, NOVA_COMPUTE = 'reporter', 'nova-compute'

reporter_opts = [
    cfg.StrOpt(
        'image_type_traits_owner',
        default=REPORTER,
        choices=[
            (REPORTER, 'This reporter keeps the COMPUTE_IMAGE_TYPE_* traits '
                       'on the provider, and the custom traits.'),
            (NOVA_COMPUTE, 'nova-compute keeps the COMPUTE_IMAGE_TYPE_* '
                           'traits (it does since Train); this reporter '
                           'keeps only its custom traits and never touches '
                           'an image-type trait.')],
        help='Who owns the image-type traits on this node\'s provider. Both '
             'give the same answer for the same nova.conf; choose '
             '``nova-compute`` where nova-compute runs and reports them, so '
             'that one writer owns them, and ``reporter`` for nodes whose '
             'nova-compute does not (older than Train, or drivers that '
             'report no capabilities).'),
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
        help='Where the reporter remembers which custom traits it set on '
             'which provider, so that a trait dropped from '
             '``custom_traits`` is removed even after a restart. Default: '
             '``$state_path/virt_capabilities.json`` when ``[DEFAULT] '
             'state_path`` is set; otherwise nothing is written anywhere, '
             'and a dropped custom trait is removed only by a service that '
             'kept running since it set it.'),
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
