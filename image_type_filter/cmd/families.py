"""``--family``: image-metadata families a command treats as enabled."""

from image_type_common import property_traits

ALL = 'all'


def add_argument(parser, purpose):
    parser.add_argument(
        '--family', action='append', default=None,
        choices=property_traits.NAMES + (ALL,),
        help='Treat this image-metadata family as enabled, to %s before '
             'it is (repeatable; "all" for every one). Default: the '
             'families [image_metadata_prefilter] enables in the config '
             'files.' % purpose)


def chosen(parsed_args, configured):
    """The families asked for, else those configured; in catalogue order
    and each once."""
    names = parsed_args.family or configured
    if ALL in names:
        return property_traits.NAMES
    return tuple(n for n in property_traits.NAMES if n in names)
