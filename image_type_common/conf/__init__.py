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

"""Option helpers and the ``[placement]`` options both halves register."""

from oslo_config import cfg


def fresh_group(group):
    """A new OptGroup like ``group``, for registering on one ConfigOpts:
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


def register_listed(conf, modules):
    """Register the options the modules' ``list_opts`` give: so a module
    of options says its group once, and registers nothing itself."""
    for group, opts in merged_list_opts(modules):
        if group == 'DEFAULT':
            conf.register_opts(opts)
        else:
            conf.register_group(fresh_group(group))
            conf.register_opts(opts, group=group.name)
