"""Helpers shared by the option modules."""

from oslo_config import cfg


def fresh_group(group):
    """A new OptGroup like ``group``, for registering on one ConfigOpts.

    oslo.config copies a registered group only shallowly, so two ConfigOpts
    given the same OptGroup object share its option state: an override set
    on one shows on the other (a re-read on SIGHUP would see stale values).
    """
    return cfg.OptGroup(group.name, title=group.title, help=group.help)


def merged_list_opts(modules):
    """``list_opts`` for a package: every module's groups, merged."""
    merged = {}
    for module in modules:
        for group, opts in module.list_opts().items():
            merged.setdefault(group, []).extend(opts)
    return list(merged.items())
