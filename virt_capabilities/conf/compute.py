"""[compute] options: the operator's own exclusions."""

from oslo_config import cfg

from image_type_common.conf.groups import fresh_group

compute_group = cfg.OptGroup(
    'compute', title='Compute options',
    help='Options of nova-compute that narrow the reported image formats.')

compute_opts = [
    cfg.ListOpt(
        'image_type_exclude_list',
        default=[],
        help='Disk image formats this node must not be scheduled for even '
             'though its driver could boot them, for example ``qcow2`` on a '
             'Ceph-backed node where conversion would be slow. Each entry '
             'must be a known format (the ``COMPUTE_IMAGE_TYPE_*`` traits of '
             'os-traits, in lower case).'),
]


def register_opts(conf):
    conf.register_group(fresh_group(compute_group))
    conf.register_opts(compute_opts, group=compute_group.name)


def list_opts():
    return {compute_group: compute_opts}
