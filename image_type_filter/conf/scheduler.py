"""[scheduler] options of the image-type request filter.

The filters' own options, which nova-scheduler reads from nova.conf
(``register_filter_opts``). Nova's ``query_placement_for_image_type_support``
is Nova's option: inside nova-scheduler it is read, never declared again;
elsewhere it is declared here so a nova.conf that sets it means the same
thing. This project's own scheduler client has its options in
``[scheduler_client]`` (``scheduler_client.py``).
"""

from oslo_config import cfg

from image_type_common.conf.groups import fresh_group

scheduler_group = cfg.OptGroup(
    'scheduler', title='Scheduler options',
    help='Request filters that narrow the allocation-candidate query.')

IGNORE, REJECT = 'ignore', 'reject'

NOVA_OPTION = 'query_placement_for_image_type_support'
NOVA_METADATA_OPTION = 'image_metadata_prefilter'

filter_opts = [
    cfg.BoolOpt(
        'filter_hosts_by_image_type_support',
        default=False,
        help='Ask Placement only for hosts whose virt driver can boot the '
             'image\'s ``disk_format``, by requiring the matching '
             '``COMPUTE_IMAGE_TYPE_*`` trait on the compute node. '
             'Volume-backed requests are not filtered. Upgrade rule: enable '
             'this only once every compute node reports its image-type '
             'traits (``image-type-filter status`` exits 0); a node that '
             'reports none would receive no boots at all. Nova\'s own '
             '``query_placement_for_image_type_support`` turns it on too; '
             'with both on, the trait is added once.'),
    cfg.StrOpt(
        'image_type_unknown_format',
        default=IGNORE,
        choices=[
            (IGNORE, 'Add no constraint and log a warning once per format '
                     '(Nova\'s behaviour).'),
            (REJECT, 'Fail the request, naming the format and the known '
                     'ones.')],
        help='What to do with an image whose ``disk_format`` maps to no '
             'known ``COMPUTE_IMAGE_TYPE_*`` trait (missing, empty or '
             'unknown).'),
    cfg.FloatOpt(
        'image_type_traits_refresh_interval',
        default=10.0,
        min=0,
        help='Seconds a "no compute host carries this trait" answer is '
             'trusted. The filters read which traits the hosts carry with '
             'one ``GET /traits?associated=true``, never one request per '
             'boot, so that a boot no host can take fails with a fault '
             'naming why ("No compute host boots vmdk images ...", or the '
             'reserved trait nobody carries). A host that starts carrying '
             'the trait is seen within this time; 0 asks again on every '
             'such boot.'),
    cfg.ListOpt(
        'enabled_request_filters',
        default=['require_image_type_support', 'isolate_image_properties',
                 'require_image_metadata_support'],
        help='Request filters to run, in order, from the '
             '``image_type_filter.request_filters`` entry-point namespace. '
             'Each filter still honours its own on/off option. Third-party '
             'filters register there instead of patching the scheduler.'),
]

nova_opts = [
    cfg.BoolOpt(
        NOVA_OPTION,
        default=False,
        help='Nova\'s own option for its image-type request filter, read '
             'here so that a nova.conf which sets it means the same to this '
             'project\'s tools: it turns the image-type filter on like '
             '``filter_hosts_by_image_type_support``. Inside nova-scheduler '
             'this is Nova\'s option and is not declared again.'),
    cfg.BoolOpt(
        NOVA_METADATA_OPTION,
        default=False,
        help='Nova\'s own image-metadata request filter, read here only so '
             'that ``image-type-filter status`` and the request filters can '
             'warn when it is on beside ``[image_metadata_prefilter] '
             'families``: it drops every trait of a request when one '
             'computed name is not in os-traits, and sends i686 images only '
             'to HW_ARCH_I686 hosts. Inside nova-scheduler this is Nova\'s '
             'option and is not declared again.'),
]


def register_filter_opts(conf):
    """The filters' own options: what nova-scheduler registers."""
    conf.register_group(fresh_group(scheduler_group))
    conf.register_opts(filter_opts, group=scheduler_group.name)


def register_opts(conf):
    """Everything, on a ConfigOpts of this project's own (not Nova's)."""
    register_filter_opts(conf)
    conf.register_opts(nova_opts, group=scheduler_group.name)


def list_opts():
    return {scheduler_group: filter_opts + nova_opts}
