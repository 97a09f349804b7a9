"""The scheduler side's configuration, read once into typed values.

Every option the request filters and the client use is read here, in one
pass, and handed down as a frozen dataclass: no other module reads an option
by name, and a malformed value fails here with one line naming it.
"""

import dataclasses

from image_type_common.conf import loading
from image_type_filter.conf import scheduler as scheduler_conf
from image_type_filter.conf import scheduler_client as client_conf


def _read(conf, name, group):
    return loading.read(conf, name, group)


@dataclasses.dataclass(frozen=True)
class FilterSettings:
    """What the request filters nova-scheduler runs are told."""

    #: ``filter_hosts_by_image_type_support`` or Nova's own option.
    image_type_enabled: bool = False
    unknown_format: str = scheduler_conf.IGNORE
    enabled_request_filters: tuple = ('require_image_type_support',
                                      'isolate_image_properties')
    isolation_enabled: bool = False
    isolation_rules: tuple = ()
    traits_refresh_interval: float = 10.0

    @property
    def rejects_unknown_format(self):
        return self.unknown_format == scheduler_conf.REJECT

    @classmethod
    def from_conf(cls, conf):
        """From a ConfigOpts with the filters' options (Nova's CONF too)."""
        nova_option = (scheduler_conf.NOVA_OPTION in conf.scheduler and
                       _read(conf, scheduler_conf.NOVA_OPTION, 'scheduler'))
        return cls(
            image_type_enabled=bool(
                _read(conf, 'filter_hosts_by_image_type_support',
                      'scheduler') or nova_option),
            unknown_format=_read(conf, 'image_type_unknown_format',
                                 'scheduler'),
            enabled_request_filters=tuple(
                _read(conf, 'enabled_request_filters', 'scheduler')),
            isolation_enabled=_read(conf, 'enabled', 'image_isolation'),
            isolation_rules=tuple(_read(conf, 'rules', 'image_isolation')),
            traits_refresh_interval=_read(
                conf, 'image_type_traits_refresh_interval', 'scheduler'))


@dataclasses.dataclass(frozen=True)
class ClientSettings:
    """What this project's own scheduler client is told (not Nova)."""

    filters: FilterSettings = FilterSettings()
    trait_parameter: str = client_conf.ROOT_REQUIRED
    flat_check_interval: int = 300

    @classmethod
    def from_conf(cls, conf):
        group = client_conf.scheduler_client_group.name
        return cls(
            filters=FilterSettings.from_conf(conf),
            trait_parameter=_read(conf, 'image_type_trait_parameter', group),
            flat_check_interval=_read(conf, 'image_type_flat_check_interval',
                                      group))
