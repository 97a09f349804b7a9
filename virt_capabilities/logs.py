"""nova-compute's logging conventions for the reporter, through oslo.log.

The options nova.conf already has for nova-compute (``log_file``,
``log_dir``, ``use_syslog``, ``use_journal``, ``log_config_append``,
``debug`` ...) mean the same here. When nova.conf sets none of them, the
command keeps logging to stderr, one line per event.
"""

from oslo_log import log

DESTINATIONS = ('log_file', 'log_dir', 'use_syslog', 'use_journal',
                'use_eventlog', 'log_config_append')


def register_opts(conf):
    log.register_options(conf)


def setup(conf):
    """Log where nova.conf says, if it says; returns whether it did."""
    if not any(getattr(conf, name, None) for name in DESTINATIONS):
        return False
    log.setup(conf, 'virt-capabilities')
    return True
