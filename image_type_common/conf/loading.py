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

"""Parse nova.conf files, with each half's options, into a ConfigOpts:
any error is one line naming the file or the option, never a traceback."""

import glob
import os

from oslo_config import cfg

from image_type_common import exceptions
from image_type_common import text


def load(config_files, register, conf=None, config_dirs=()):
    """nova.conf files, then each config dir's ``*.conf``, later winning,
    into a fresh (or given) ConfigOpts; a missing or unparsable one is a
    ConfigError naming it."""
    conf = conf if conf is not None else cfg.ConfigOpts()
    register(conf)
    for path in config_files:
        check_file(path)
    for directory in config_dirs:
        if not os.path.isdir(directory):
            raise exceptions.ConfigError(
                'config dir %s does not exist or is not a directory'
                % directory)
        # As oslo.config (and so nova-compute) reads a config dir.
        for path in sorted(glob.glob(os.path.join(directory, '*.conf'))):
            check_file(path)
    try:
        conf(args=[], project='nova', default_config_files=list(config_files),
             default_config_dirs=list(config_dirs), use_env=False)
    except cfg.Error as exc:
        raise exceptions.ConfigError(text.one_line(exc)) from exc
    validate_all(conf)
    return conf


def check_file(path):
    """Readable UTF-8, or a ConfigError naming the file and the place."""
    try:
        with open(path, 'rb') as f:
            f.read().decode('utf-8')
    except UnicodeDecodeError as exc:
        raise exceptions.ConfigError(
            'config file %s is not UTF-8: byte 0x%02x at offset %d'
            % (path, exc.object[exc.start], exc.start)) from exc
    except OSError as exc:
        raise exceptions.ConfigError(
            'config file %s does not exist or is not readable (%s)'
            % (path, exc.strerror or exc)) from exc


def validate_all(conf):
    """Read every registered option now, so a malformed one fails at load."""
    for name in list(conf):
        value = read(conf, name)
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            for opt in list(value):
                read(conf, opt, name)


def read(conf, name, group=None):
    """Read one option, turning a malformed value into a ConfigError."""
    try:
        return getattr(conf[group], name) if group else getattr(conf, name)
    except (cfg.Error, ValueError) as exc:
        where = '[%s] %s' % (group or 'DEFAULT', name)
        reason = text.one_line(exc).rpartition(' is not valid: ')[2]
        raise exceptions.ConfigError('%s: %s' % (where, reason)) from exc
