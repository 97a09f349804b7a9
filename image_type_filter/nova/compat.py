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

"""Every Nova internal this project touches, and every module of it that
imports Nova: the seams where a Nova release can break it.

Nova has no Python API and no plug-in point for request filters, so each
name in ``SEAMS`` is an internal that carries no promise. A row says the
name, the part that uses it and why; ``WHEN_CHANGED`` says what happens
to each part when a Nova release renames or drops one of its names (an
optional name says what is lost instead). ``IMPORTERS`` lists the modules
that import Nova, and tests/unit/image_type_filter/test_nova_seams.py
holds it to the code; tests/nova looks every name up in both supported
Nova releases.

The names nova-scheduler's parts use are looked up here, once, when it
loads ``image_type_filter.nova.all_filters`` (``resolve``), before
anything imports Nova directly: a Nova where one moved gets one log line
naming the release and what is missing (``Nova.report``), never an
ImportError's traceback.

The contract risk, said once: ``ALL_REQUEST_FILTERS`` is changed in
place. Nova offers no other seam (no option or entry point adds a request
filter: ``process_reqspec`` iterates this module-level list), so the
entry is appended to it; ``integration.request_check`` notices a Nova
that stops iterating it.
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
OPTIONAL = 'optional'
CANDIDATES = 'candidates'

#: What happens to each part in a Nova that lacks one of its names.
WHEN_CHANGED = {
    CORE: 'nova-scheduler stops at start-up, one ERROR line naming it',
    REQUEST_FILTERS: 'the filters are not added: one ERROR line, then '
                     'nova-scheduler runs as Nova alone, or stops if '
                     'isolation is enforced',
    HOST_FILTER: 'as for the request filters',
    OPTIONAL: 'one WARNING at start-up naming what is lost (the row\'s '
              'why)',
    CANDIDATES: 'candidates --server, --image and --flavor refuse to run, '
                'one line naming it (exit 2)',
}


@dataclasses.dataclass(frozen=True)
class Seam:
    #: ``module:attribute[.attribute]``, said with dots in messages.
    name: str
    part: str
    #: Why it is used; for an OPTIONAL name, what is lost without it.
    why: str


# The names code elsewhere looks up with ``Nova.get``.
CONF = 'nova.conf:CONF'
REPORT_CLIENT = 'nova.scheduler.client.report:report_client_singleton'
ALL_REQUEST_FILTERS = 'nova.scheduler.request_filter:ALL_REQUEST_FILTERS'
TRACE_REQUEST_FILTER = 'nova.scheduler.request_filter:trace_request_filter'
REQUEST_FILTER_FAILED = 'nova.exception:RequestFilterFailed'
NO_VALID_HOST = 'nova.exception:NoValidHost'
IMAGE_META_PROPS = 'nova.objects.image_meta:ImageMetaProps'
SCATTER_GATHER = 'nova.context:scatter_gather_skip_cell0'
CELL_FAILED = 'nova.context:is_cell_failure_sentinel'
COMPUTE_NODES_BY_UUIDS = \
    'nova.objects.compute_node:ComputeNodeList.get_all_by_uuids'
HOST_GUESTS_LOST = (
    'the HW_ARCH_* trait in "No valid host" when only hosts with no '
    'HW_ARCH_* trait could take the boot and none runs its architecture')
_FIELD = 'a field the filters read or write (an oslo versioned object\'s ' \
    'field is a property of its class)'

SEAMS = (
    Seam(CONF, CORE, 'nova-scheduler\'s configuration: our options are '
         'registered on it, [filter_scheduler] enabled_filters read'),
    Seam(REPORT_CLIENT, CORE, 'Placement through Nova\'s own connection '
         'and [placement] credentials (get and put)'),
    Seam(ALL_REQUEST_FILTERS, REQUEST_FILTERS, 'the list Nova runs before '
         'each allocation-candidate query; our entry is appended to it '
         '(the contract risk above); a list, or it counts as missing'),
    Seam(REQUEST_FILTER_FAILED, REQUEST_FILTERS, 'how a request filter '
         'refuses: select_destinations turns it into NoValidHost'),
    *(Seam('nova.objects.request_spec:RequestSpec.' + field,
           REQUEST_FILTERS, _FIELD)
      for field in ('root_required', 'root_forbidden', *pipeline.READ)),
    *(Seam('nova.objects.image_meta:ImageMeta.' + field, REQUEST_FILTERS,
           _FIELD) for field in ('id', 'disk_format', 'properties')),
    Seam(IMAGE_META_PROPS, REQUEST_FILTERS, 'its fields are the image '
         'properties Nova keeps, which isolation rules may name'),
    Seam('nova.objects.image_meta:ImageMetaProps.traits_required',
         REQUEST_FILTERS, _FIELD),
    Seam('nova.objects.flavor:Flavor.extra_specs', REQUEST_FILTERS,
         _FIELD),
    Seam('nova.scheduler.filters:BaseHostFilter', HOST_FILTER, 'Nova loads '
         'only its subclasses as host filters (host_filter)'),
    Seam('nova.scheduler.filters:BaseHostFilter.RUN_ON_REBUILD',
         HOST_FILTER, 'Nova runs a host filter on a rebuild only if set'),
    Seam('nova.scheduler.utils:request_is_rebuild', HOST_FILTER,
         'tells a rebuild from every other request'),
    Seam(TRACE_REQUEST_FILTER, OPTIONAL, 'Nova\'s debug line timing the '
         'request filters'),
    Seam(NO_VALID_HOST, OPTIONAL, 'the reason in a refused rebuild\'s '
         'fault (it says only "No valid host was found"; the reason is '
         'in the WARNING line)'),
    Seam(SCATTER_GATHER, OPTIONAL, HOST_GUESTS_LOST),
    Seam(CELL_FAILED, OPTIONAL, HOST_GUESTS_LOST),
    Seam(COMPUTE_NODES_BY_UUIDS, OPTIONAL, HOST_GUESTS_LOST),
    # candidates --server, --image and --flavor (as_scheduler)
    Seam('nova.config:parse_args', CANDIDATES, 'nova.conf read as '
         'nova-scheduler reads it'),
    Seam('nova.objects:register_all', CANDIDATES, 'Nova\'s objects'),
    Seam('nova.context:get_admin_context', CANDIDATES, 'database access'),
    Seam('nova.scheduler.filters:HostFilterHandler', CANDIDATES, 'loads '
         'available_filters, our request filters among them'),
    Seam('nova.objects.request_spec:RequestSpec.get_by_instance_uuid',
         CANDIDATES, 'a server\'s request spec, as Nova keeps it'),
    *(Seam('nova.objects.flavor:Flavor.' + name, CANDIDATES, 'a flavor '
           'from the API database') for name in ('get_by_flavor_id',
                                                 'get_by_name')),
    *(Seam(name, CANDIDATES, 'to build the request spec as nova-api does')
      for name in ('nova.objects.request_spec:RequestSpec.from_components',
                   'nova.objects.image_meta:ImageMeta.from_dict',
                   'nova.virt.hardware:numa_get_constraints',
                   'nova.pci.request:get_pci_requests_from_flavor')),
    Seam('nova.image.glance:_translate_from_glance', CANDIDATES, 'Glance\'s '
         'answer as nova-api\'s image API translates it (private)'),
    Seam(ALL_REQUEST_FILTERS, CANDIDATES, 'Nova\'s request filters, run '
         'in Nova\'s order'),
    Seam('nova.scheduler.utils:resources_from_request_spec', CANDIDATES,
         'the allocation-candidate query, built by Nova'),
    Seam('nova.scheduler.host_manager:HostManager', CANDIDATES, 'what the '
         'query builder asks about a host the request names'),
    *(Seam('nova.exception:' + name, CANDIDATES, 'Nova\'s refusals, '
           'each said in one line') for name in (
        'NovaException', 'NotFound', 'FlavorNotFound', 'RequestSpecNotFound',
        'RequestFilterFailed', 'NoValidHost')),
    Seam('nova.version:version_string', CANDIDATES, 'the Nova release '
         'the answer is from'),
)

#: Every module of the product that imports Nova -> how.
IMPORTERS = {
    'image_type_filter/nova/compat.py': 'importlib, the names above, once '
                                        'at start-up (resolve)',
    'image_type_filter/nova/host_filter.py': 'its base class and '
                                             'request_is_rebuild, once '
                                             'resolve found them',
    'image_type_filter/diagnostics/nova_side/as_scheduler.py':
        'inside its functions, when candidates --server, --image or '
        '--flavor runs (load_nova)',
}

#: The names nova-scheduler's parts look up -> their part, in order.
NEEDS = {seam.name: seam.part for seam in SEAMS
         if seam.part in (CORE, REQUEST_FILTERS, HOST_FILTER)}
#: The optional names -> what runs without each.
LOST = {seam.name: seam.why for seam in SEAMS if seam.part == OPTIONAL}


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


def resolve(parts=(CORE, REQUEST_FILTERS, HOST_FILTER, OPTIONAL)):
    """Look the names of these parts up; never raises (a Nova module that
    fails to import makes its names missing, with the error's first
    line)."""
    found, missing = {}, {}
    for name in dict.fromkeys(s.name for s in SEAMS if s.part in parts):
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
