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

"""The scheduler side's configuration, read once into typed values.

Every option the request filters use is read here, once, into a frozen
dataclass, so a malformed value fails here in one line;
image_type_filter/scheduler/ reads no option by name (a test holds it).

Options that configure no filter are read where they are used:
``nova.integration`` (Nova's ``[filter_scheduler] enabled_filters``),
``diagnostics.nova_side.as_scheduler`` (``available_filters``,
``[workarounds] disable_fallback_pcpu_query``), and
``image_type_common.connection`` and ``cmd.osc_plugin`` (``[placement]``).
"""

import dataclasses
import functools

from oslo_config import cfg

from image_type_common.conf import loading
from image_type_filter import conf as itf_conf
from image_type_filter.conf import image_type_filter as filter_conf
from image_type_filter.conf import scheduler as scheduler_conf


@functools.cache
def _unconfigured():
    """The scheduler side's options as no file, argument or environment
    sets them: each at its default (image_type_filter/conf/)."""
    conf = cfg.ConfigOpts()
    itf_conf.register_opts(conf)
    conf(args=[], default_config_files=[], default_config_dirs=[],
         use_env=False)
    return conf


@dataclasses.dataclass(frozen=True)
class FilterSettings:
    """What the request filters are told, from ``from_conf`` (the
    options' own defaults; ``defaults`` sets a few)."""

    #: False: log what the filters would do, change no request.
    enforce: bool
    #: ``filter_hosts_by_image_type_support`` or Nova's own option.
    image_type_enabled: bool
    unknown_format: str
    isolation_enabled: bool
    isolation_rules: tuple
    traits_refresh_interval: float
    #: ``[image_metadata_prefilter] families``; empty is off.
    image_metadata_families: tuple
    #: Nova's own ``[scheduler] image_metadata_prefilter``.
    novas_metadata_prefilter: bool

    @property
    def rejects_unknown_format(self):
        return self.unknown_format == filter_conf.REJECT

    @property
    def isolation_enforced(self):
        """Reserved hosts must stay reserved: isolation is on, has rules,
        and what the filters decide is applied."""
        return bool(self.enforce and self.isolation_enabled
                    and self.isolation_rules)

    @classmethod
    def from_conf(cls, conf):
        """From a ConfigOpts with the filters' options (Nova's CONF too)."""
        def read(name, group):
            return loading.read(conf, name, group)

        def novas(name):
            return bool(name in conf.scheduler and read(name, 'scheduler'))

        nova_option = novas(scheduler_conf.NOVA_OPTION)
        filters = filter_conf.image_type_filter_group.name
        return cls(
            enforce=read('enforce', filters),
            image_type_enabled=bool(read(
                'filter_hosts_by_image_type_support', 'scheduler')
                or nova_option),
            unknown_format=read('unknown_format', filters),
            isolation_enabled=read('enabled', 'image_isolation'),
            isolation_rules=tuple(read('rules', 'image_isolation')),
            traits_refresh_interval=read('traits_refresh_interval', filters),
            image_metadata_families=tuple(dict.fromkeys(read(
                'families', 'image_metadata_prefilter'))),
            novas_metadata_prefilter=novas(
                scheduler_conf.NOVA_METADATA_OPTION))

    @classmethod
    def defaults(cls, **values):
        """The options' defaults with ``values`` (field names) set: what
        the demo, the benchmarks and the tests run with."""
        return dataclasses.replace(cls.from_conf(_unconfigured()), **values)
