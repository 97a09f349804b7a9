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

"""The Nova internals this package uses, found at start-up or named as
missing.

Every one is looked up here, once, when nova-scheduler loads
``image_type_filter.nova.all_filters``; nothing of Nova is imported at
module level anywhere in this package, so a Nova where one moved gets one
log line naming the Nova release and what is missing (``Nova.report``),
never an ImportError's traceback. Which part needs which name (``NEEDS``),
what runs without the others (``LOST``) and what the scheduler then does
(``integration``) are doc/source/install/scheduler.rst's "A Nova this
release was not tested with".
"""

import dataclasses
import importlib
from importlib import metadata
import re

from image_type_common import nova_releases
from image_type_filter.scheduler import pipeline

CORE = 'core'
REQUEST_FILTERS = 'request filters'
HOST_FILTER = 'host filter'

# Each name is ``module:attribute[.attribute]``, said with dots.
CONF = 'nova.conf:CONF'
REPORT_CLIENT = 'nova.scheduler.client.report:report_client_singleton'
ALL_REQUEST_FILTERS = 'nova.scheduler.request_filter:ALL_REQUEST_FILTERS'
TRACE_REQUEST_FILTER = 'nova.scheduler.request_filter:trace_request_filter'
REQUEST_FILTER_FAILED = 'nova.exception:RequestFilterFailed'
NO_VALID_HOST = 'nova.exception:NoValidHost'
BASE_HOST_FILTER = 'nova.scheduler.filters:BaseHostFilter'
REQUEST_IS_REBUILD = 'nova.scheduler.utils:request_is_rebuild'
IMAGE_META_PROPS = 'nova.objects.image_meta:ImageMetaProps'
SCATTER_GATHER = 'nova.context:scatter_gather_skip_cell0'
CELL_FAILED = 'nova.context:is_cell_failure_sentinel'
COMPUTE_NODES_BY_UUIDS = \
    'nova.objects.compute_node:ComputeNodeList.get_all_by_uuids'
#: What the three names above serve.
HOST_GUESTS_LOST = (
    'the HW_ARCH_* trait in "No valid host" when only hosts with no '
    'HW_ARCH_* trait could take the boot and none runs its architecture')

#: Every name looked up -> the part that needs it, in the order reported.
NEEDS = {
    CONF: CORE,
    REPORT_CLIENT: CORE,
    ALL_REQUEST_FILTERS: REQUEST_FILTERS,
    REQUEST_FILTER_FAILED: REQUEST_FILTERS,
    # The fields the filters and the rebuild check read or write: an oslo
    # versioned object's field is a property of its class.
    **{'nova.objects.request_spec:RequestSpec.' + field: REQUEST_FILTERS
       for field in ('root_required', 'root_forbidden', *pipeline.READ)},
    **{'nova.objects.image_meta:ImageMeta.' + field: REQUEST_FILTERS
       for field in ('id', 'disk_format', 'properties')},
    IMAGE_META_PROPS: REQUEST_FILTERS,
    'nova.objects.image_meta:ImageMetaProps.traits_required': REQUEST_FILTERS,
    'nova.objects.flavor:Flavor.extra_specs': REQUEST_FILTERS,
    BASE_HOST_FILTER: HOST_FILTER,
    REQUEST_IS_REBUILD: HOST_FILTER,
}
#: Every name looked up that nothing needs -> what runs without it.
LOST = {
    TRACE_REQUEST_FILTER: 'Nova\'s debug line timing the request filters',
    SCATTER_GATHER: HOST_GUESTS_LOST,
    CELL_FAILED: HOST_GUESTS_LOST,
    COMPUTE_NODES_BY_UUIDS: HOST_GUESTS_LOST,
    NO_VALID_HOST: 'the reason in a refused rebuild\'s fault (it says only '
                   '"No valid host was found"; the reason is in the WARNING '
                   'line)',
}


def dotted(name):
    """A NEEDS name as Python would say it: ``nova.conf.CONF``."""
    return name.replace(':', '.')


class NovaIncompatible(Exception):
    """This Nova lacks what a part that must run needs (the message is the
    ERROR line already logged)."""


def nova_version():
    """The installed Nova's version, as its package says, or 'unknown'."""
    try:
        return metadata.version('nova')
    except metadata.PackageNotFoundError:
        return 'unknown'


def _major(version):
    match = re.match(r'(\d+)\.', version)
    return int(match.group(1)) if match else None


def _why(exc):
    return ('%s: %s' % (type(exc).__name__, exc)).splitlines()[0][:160]


@dataclasses.dataclass
class Nova:
    """What was found of Nova: ``get(name)``; what was not: ``missing``,
    name (or ``module X``, for a module that does not import) -> why."""

    version: str
    found: dict
    missing: dict

    @property
    def supported(self):
        return nova_releases.supports(_major(self.version))

    def get(self, name, default=None):
        return self.found.get(name, default)

    def _lost(self, name):
        return (dotted(name) in self.missing
                or 'module ' + name.split(':')[0] in self.missing)

    def lacks(self, *parts):
        """The missing names of these parts, in NEEDS' order."""
        return [dotted(name) for name, part in NEEDS.items()
                if part in parts and self._lost(name)]

    def report(self):
        """One line: the Nova release, and what is missing with why: a
        module that does not import once, a name each."""
        items = sorted(self.missing.items(),
                       key=lambda item: not item[0].startswith('module '))
        return ('Nova %s (image-type-filter supports %s, tested with %s): '
                'missing %s' % (self.version, nova_releases.RANGE,
                                nova_releases.TESTED,
                                '; '.join('%s (%s)' % item for item in items)
                                or 'nothing'))

    def optional_losses(self):
        return ['%s (without it: %s)' % (dotted(name), lost)
                for name, lost in LOST.items() if self._lost(name)]


def resolve():
    """Look every Nova name up; never raises (a Nova module that fails to
    import makes its names missing, with the error's first line)."""
    found, missing = {}, {}
    for name in (*NEEDS, *LOST):
        module, attrs = name.split(':')
        if 'module ' + module in missing:
            continue
        try:
            value = importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - any import-time failure
            missing['module ' + module] = _why(exc)
            continue
        try:
            for attr in attrs.split('.'):
                value = getattr(value, attr)
        except AttributeError as exc:
            missing[dotted(name)] = _why(exc)
            continue
        if name == ALL_REQUEST_FILTERS and not isinstance(value, list):
            missing[dotted(name)] = 'is not a list'
            continue
        found[name] = value
    return Nova(nova_version(), found, missing)
