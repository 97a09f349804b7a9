# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""nova-compute's logging conventions for the reporter, through oslo.log.

nova.conf's logging options for nova-compute (``log_file``, ``log_dir``,
``use_syslog`` ...) mean the same here; with none, stderr. A destination
that cannot be opened (a kolla ``log_dir`` read outside its container) is
a ConfigError naming the option and the path.
"""

import logging

from oslo_log import log

from image_type_common import exceptions
from image_type_common import library_logs

DESTINATIONS = ('log_file', 'log_dir', 'use_syslog', 'use_journal',
                'use_eventlog', 'log_config_append')


def quiet_default_log_levels():
    """oslo.log's ``default_log_levels`` with the libraries the command
    line quiets (``library_logs``, which says why) at ERROR; an operator's
    own ``default_log_levels`` in nova.conf still wins."""
    def chatty(entry):
        name = entry.split('=')[0]
        return any(name == lib or name.startswith(lib + '.') or
                   name.startswith('requests.packages.' + lib)
                   for lib in library_logs.CHATTY_LOGGERS)
    return ([e for e in log.get_default_log_levels() if not chatty(e)]
            + ['%s=ERROR' % lib for lib in library_logs.CHATTY_LOGGERS])


def register_opts(conf):
    log.register_options(conf)
    conf.set_default('default_log_levels', quiet_default_log_levels())


def setup(conf):
    """Log where nova.conf says, if it says; return whether it did. For a
    ConfigError, stderr's handler (which oslo.log took down) is put back
    for that one line."""
    if not any(getattr(conf, name, None) for name in DESTINATIONS):
        return False
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        log.setup(conf, 'virt-capabilities')
    except (OSError, log.LogConfigError) as exc:
        added = set(root.handlers) - set(before)
        root.handlers[:] = before
        for handler in added:
            handler.close()
        raise exceptions.ConfigError(_destination_error(conf, exc)) from exc
    return True


def _destination_error(conf, exc):
    """The one line: which option, which path, why."""
    if isinstance(exc, log.LogConfigError):
        return '[DEFAULT] log_config_append %s: %s' % (exc.log_config,
                                                      exc.err_msg)
    why = exc.strerror or str(exc)
    if conf.log_dir and exc.filename:
        return ('[DEFAULT] log_dir %s: cannot open the log file %s there '
                '(%s); create the directory, or set log_dir (or log_file) '
                'to one this host has' % (conf.log_dir, exc.filename, why))
    if conf.log_file and exc.filename:
        return '[DEFAULT] log_file %s: cannot open it (%s)' % (exc.filename,
                                                              why)
    return 'cannot log where nova.conf says (%s): %s' % (', '.join(
        name for name in DESTINATIONS if getattr(conf, name, None)), why)
