"""[scheduler] options of the image-type request filter."""

from oslo_config import cfg

from image_type_common.conf.groups import fresh_group

scheduler_group = cfg.OptGroup(
    'scheduler', title='Scheduler options',
    help='Request filters that narrow the allocation-candidate query.')

IGNORE, REJECT = 'ignore', 'reject'
ROOT_REQUIRED, REQUIRED, AUTO = 'root_required', 'required', 'auto'

scheduler_opts = [
    cfg.BoolOpt(
        'filter_hosts_by_image_type_support',
        default=False,
        deprecated_opts=[cfg.DeprecatedOpt(
            'query_placement_for_image_type_support', group='scheduler')],
        help='Ask Placement only for hosts whose virt driver can boot the '
             'image\'s ``disk_format``, by requiring the matching '
             '``COMPUTE_IMAGE_TYPE_*`` trait on the compute node. '
             'Volume-backed requests are not filtered. Upgrade rule: enable '
             'this only once every compute node reports its image-type '
             'traits (``image-type-filter status`` exits 0); a node that '
             'reports none would receive no boots at all. Nova\'s name for '
             'it, ``query_placement_for_image_type_support``, is accepted.'),
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
    cfg.StrOpt(
        'image_type_trait_parameter',
        default=ROOT_REQUIRED,
        choices=[
            (ROOT_REQUIRED, 'Require the trait on the root provider '
                            '(``root_required``, microversion 1.35). '
                            'Correct for every provider tree.'),
            (REQUIRED, 'Put the trait in the unsuffixed ``required`` '
                       'parameter. Selects the same hosts only when every '
                       'compute node keeps its VCPU, MEMORY_MB and DISK_GB '
                       'on its root provider and no sharing providers '
                       'exist (``image-type-filter status`` says whether '
                       'the fleet is flat); Placement answers it faster.'),
            (AUTO, 'Use ``required`` while a check, repeated every '
                   '``image_type_flat_check_interval`` seconds, finds no '
                   'nested and no sharing providers, else '
                   '``root_required``. A tree that turns nested between '
                   'two checks is queried the fast way until the next '
                   'check.')],
        help='Which query parameter carries the image-type trait. On a flat '
             'fleet both select the same hosts and Placement answers '
             '``required`` about twice as fast (see benchmarks/README.md). '
             'Against a Placement older than 1.35 the unsuffixed '
             '``required`` parameter is always used.'),
    cfg.IntOpt(
        'image_type_flat_check_interval',
        default=300,
        min=1,
        help='With ``image_type_trait_parameter = auto``: seconds between '
             'two checks of whether the fleet is flat (two Placement '
             'requests per check).'),
    cfg.ListOpt(
        'enabled_request_filters',
        default=['require_image_type_support', 'isolate_image_properties'],
        help='Request filters to run, in order, from the '
             '``image_type_filter.request_filters`` entry-point namespace. '
             'Each filter still honours its own on/off option. Third-party '
             'filters register there instead of patching the scheduler.'),
]


def register_opts(conf):
    conf.register_group(fresh_group(scheduler_group))
    conf.register_opts(scheduler_opts, group=scheduler_group.name)


def list_opts():
    return {scheduler_group: scheduler_opts}
