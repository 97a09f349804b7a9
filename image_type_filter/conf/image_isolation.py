"""[image_isolation] options: image properties that reserve hosts."""

from oslo_config import cfg

from image_type_common.conf.groups import fresh_group

image_isolation_group = cfg.OptGroup(
    'image_isolation', title='Image-property isolation',
    help='Tagged images go only to tagged hosts, and untagged images never '
         'go there, enforced by Placement with required and forbidden '
         'traits.')

image_isolation_opts = [
    cfg.BoolOpt(
        'enabled',
        default=False,
        help='Apply the isolation rules to every request, volume-backed ones '
             'included (the image properties still describe the server). '
             'Enable only once the reserved hosts carry their trait '
             '(``[virt_capabilities] custom_traits`` on those nodes).'),
    cfg.ListOpt(
        'rules',
        default=[],
        help='Rules of the form ``KEY:TRAIT`` or ``KEY=VALUE:TRAIT``, for '
             'example ``trove=true:CUSTOM_TROVE``. An image whose property '
             'KEY exists (and equals VALUE, compared case-insensitively, '
             'when given) requires TRAIT on the host; any other image '
             'forbids it. Several rules may name one trait: the trait is '
             'required when any of them matches. TRAIT must be a '
             '``CUSTOM_*`` trait; values cannot contain commas.'),
]


def register_opts(conf):
    conf.register_group(fresh_group(image_isolation_group))
    conf.register_opts(image_isolation_opts,
                       group=image_isolation_group.name)


def list_opts():
    return {image_isolation_group: image_isolation_opts}
