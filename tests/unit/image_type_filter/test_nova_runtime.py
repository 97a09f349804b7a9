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

"""What nova-scheduler runs, in the default run: our Nova integration on
plain objects shaped like Nova's.

Nova is not installed here (tests/nova boots servers through the real one),
so the few Nova names the integration looks up (``compat.NEEDS``) are stood
in by plain modules with Nova's shapes: ``ALL_REQUEST_FILTERS`` and
``trace_request_filter``, ``RequestFilterFailed``, ``NoValidHost``,
``RequestSpec`` with its
``root_required``, ``BaseHostFilter``, ``request_is_rebuild`` (a rebuild
carries ``_nova_check_type = ['rebuild']`` in its scheduler hints),
``ImageMetaProps.fields``, the report client and Nova's CONF. The filters,
the pipeline and the rebuild check are this project's own code, unchanged.
A test takes a name away (``monkeypatch``) to be a Nova where it moved.
"""

import importlib
import logging
import sys
import types
import urllib.parse

from keystoneauth1 import exceptions as ks_exc
import os_traits
from oslo_config import cfg
import pytest

from image_type_filter import conf as itf_conf
from tests import helpers

VMWARE_TRAITS = {'COMPUTE_NODE', 'COMPUTE_IMAGE_TYPE_VMDK',
                 'COMPUTE_IMAGE_TYPE_ISO', 'HW_ARCH_X86_64'}
TROVE_TRAITS = {'COMPUTE_NODE', 'COMPUTE_IMAGE_TYPE_RAW',
                'COMPUTE_IMAGE_TYPE_QCOW2', 'CUSTOM_TROVE', 'HW_ARCH_X86_64',
                'COMPUTE_STORAGE_BUS_SCSI', 'COMPUTE_VIOMMU_MODEL_INTEL'}


class RequestFilterFailed(Exception):
    def __init__(self, reason):
        super().__init__('Scheduling failed: %s' % reason)
        self.reason = reason


class NoValidHost(Exception):
    """Nova's: its message is "No valid host was found. <reason>"."""

    def __init__(self, reason):
        super().__init__('No valid host was found. %s' % reason)


class FakeReportClient:
    """Nova's report client as the integration uses it: GET with a
    microversion, returning a response."""

    def __init__(self, traits_by_host):
        self.traits_by_host = traits_by_host
        self.gets = []
        self.puts = []
        #: How a read of a host's traits fails, when it does: an
        #: exception to raise, or a status and detail to answer.
        self.traits_failure = None

    def put(self, path, data, version=None):
        self.puts.append(path)
        return types.SimpleNamespace(status_code=204, json=lambda: {},
                                     text='')

    def get(self, path, version=None):
        self.gets.append(path)
        if path == '/':
            body = {'versions': [{'id': 'v1.0', 'max_version': '1.39',
                                  'min_version': '1.0'}]}
        elif path == '/traits?associated=true':
            body = {'traits': sorted(set().union(
                *self.traits_by_host.values()))}
        elif path.startswith('/resource_providers?'):
            # GET /resource_providers?required=A,!B: those with A, not B.
            asked = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
            terms = asked['required'][0].split(',')
            body = {'resource_providers': [
                {'uuid': uuid, 'name': uuid}
                for uuid, traits in sorted(self.traits_by_host.items())
                if all((t[1:] not in traits) if t.startswith('!')
                       else (t in traits) for t in terms)]}
        elif path.startswith('/traits?'):
            asked = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
            names = asked['name'][0][len('in:'):].split(',')
            body = {'traits': sorted(set(names) & (
                set(os_traits.get_traits()) | {'CUSTOM_TROVE'}))}
        elif isinstance(self.traits_failure, Exception):
            raise self.traits_failure
        elif self.traits_failure:
            status, detail = self.traits_failure
            body = {'errors': [{'status': status, 'detail': detail,
                                'code': 'placement.undefined_code'}]}
            return types.SimpleNamespace(status_code=status,
                                         json=lambda: body, text=detail)
        else:
            uuid = path.split('/')[2]
            body = {'traits': sorted(self.traits_by_host[uuid]),
                    'resource_provider_generation': 1}
        return types.SimpleNamespace(status_code=200, json=lambda: body,
                                     text='')


def _module(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


ENTRY = 'image_type_filter.request_filters'
ENABLED = ['ComputeFilter', 'ImageTypeRebuildFilter']


class NovaObject:
    """Enough of an oslo versioned object class: its declared fields, each
    a property of the class, as oslo.versionedobjects makes them."""

    def __init_subclass__(cls):
        for name in cls.fields:
            setattr(cls, name, property(lambda self: None))


@pytest.fixture
def nova(monkeypatch):
    """Nova's names the integration looks up, then the integration itself,
    imported afresh against them; yields a namespace."""
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.BoolOpt('query_placement_for_image_type_support',
                                  default=False), group='scheduler')
    conf.register_opt(cfg.ListOpt('enabled_filters', default=ENABLED),
                      group='filter_scheduler')
    conf([])
    all_filters = []
    report = FakeReportClient({'vmware-host': VMWARE_TRAITS,
                               'trove-host': TROVE_TRAITS})

    def request_is_rebuild(spec_obj):
        hints = getattr(spec_obj, 'scheduler_hints', None) or {}
        return hints.get('_nova_check_type') == ['rebuild']

    modules = {
        'nova': _module('nova'),
        'nova.conf': _module('nova.conf', CONF=conf),
        'nova.exception': _module('nova.exception',
                                  RequestFilterFailed=RequestFilterFailed,
                                  NoValidHost=NoValidHost),
        'nova.objects': _module('nova.objects'),
        'nova.objects.image_meta': _module(
            'nova.objects.image_meta', ImageMetaProps=type(
                'ImageMetaProps', (NovaObject,), {'fields': {
                    'hw_disk_bus': None, 'os_distro': None,
                    'traits_required': None}}),
            ImageMeta=type('ImageMeta', (NovaObject,), {
                'fields': dict.fromkeys(('id', 'disk_format',
                                         'properties'))})),
        'nova.objects.request_spec': _module(
            'nova.objects.request_spec', RequestSpec=type(
                'RequestSpec', (NovaObject,), {
                    'fields': dict.fromkeys(('image', 'flavor', 'is_bfv',
                                             'instance_uuid')),
                    'root_required': property(lambda self: set()),
                    'root_forbidden': property(lambda self: set())})),
        'nova.objects.flavor': _module(
            'nova.objects.flavor', Flavor=type(
                'Flavor', (NovaObject,), {'fields': {'extra_specs': None}})),
        'nova.scheduler': _module('nova.scheduler'),
        'nova.scheduler.request_filter': _module(
            'nova.scheduler.request_filter', ALL_REQUEST_FILTERS=all_filters,
            trace_request_filter=lambda fn: fn),
        'nova.scheduler.filters': _module(
            'nova.scheduler.filters', BaseHostFilter=BaseHostFilter),
        'nova.scheduler.utils': _module(
            'nova.scheduler.utils', request_is_rebuild=request_is_rebuild),
        'nova.scheduler.client': _module('nova.scheduler.client'),
        'nova.scheduler.client.report': _module(
            'nova.scheduler.client.report',
            report_client_singleton=lambda: report),
    }
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    for name in [m for m in sys.modules
                 if m.startswith('image_type_filter.nova')]:
        monkeypatch.delitem(sys.modules, name)
    package = importlib.import_module('image_type_filter.nova')
    yield types.SimpleNamespace(
        conf=conf, filters=all_filters, report=report, package=package,
        modules=modules,
        integration=sys.modules['image_type_filter.nova.integration'])
    helpers.uninstall_filters(package.integration)


class BaseHostFilter:
    """Nova's base: host filters run on a rebuild only if they say so."""

    RUN_ON_REBUILD = False


class RequestSpec(types.SimpleNamespace):
    """A plain object, equal only to itself and weakly referable, as
    Nova's objects are."""

    __eq__ = object.__eq__
    __hash__ = object.__hash__


def nova_spec(disk_format='qcow2', properties=None, is_bfv=False,
              rebuild=False, traits_required=(), server='server-1'):
    """A RequestSpec as Nova hands it to request and host filters."""
    props = types.SimpleNamespace(**(properties or {}))
    props.traits_required = list(traits_required)
    return RequestSpec(
        image=types.SimpleNamespace(disk_format=disk_format,
                                    properties=props),
        flavor=types.SimpleNamespace(extra_specs={}), is_bfv=is_bfv,
        instance_uuid=server,
        root_required=set(), root_forbidden=set(), required=set(),
        forbidden=set(),
        scheduler_hints={'_nova_check_type': ['rebuild']} if rebuild else {})


def run_request_filters(nova, spec):
    """As Nova's process_reqspec: every entry of the list, in order."""
    for request_filter in nova.filters:
        request_filter(None, spec)
    return spec


def enable(nova, **options):
    """Options as nova.conf would set them (registered as Nova would find
    them: ``all_filters`` registers them again, idempotently)."""
    itf_conf.register_nova_opts(nova.conf)
    for key, value in options.items():
        group, _, name = key.partition('__')
        nova.conf.set_override(name, value, group)


def test_all_filters_adds_our_request_filters_and_returns_the_host_filter(
        nova):
    classes = nova.package.all_filters()
    assert [c.__name__ for c in classes] == ['ImageTypeRebuildFilter']
    assert [f.__name__ for f in nova.filters] == [ENTRY]


def test_a_boot_requires_the_images_format_on_the_root(nova):
    enable(nova, scheduler__filter_hosts_by_image_type_support=True)
    nova.package.all_filters()
    spec = run_request_filters(nova, nova_spec('vmdk'))
    assert spec.root_required == {'COMPUTE_IMAGE_TYPE_VMDK'}


def test_novas_own_option_turns_it_on_too(nova):
    enable(nova, scheduler__query_placement_for_image_type_support=True)
    nova.package.all_filters()
    spec = run_request_filters(nova, nova_spec('raw'))
    assert spec.root_required == {'COMPUTE_IMAGE_TYPE_RAW'}


def test_isolation_requires_for_tagged_and_forbids_for_the_rest(nova):
    enable(nova, image_isolation__enabled=True,
           image_isolation__rules=['CUSTOM_TROVE'])
    nova.package.all_filters()
    tagged = run_request_filters(nova, nova_spec(
        traits_required=['CUSTOM_TROVE']))
    untagged = run_request_filters(nova, nova_spec())
    assert tagged.root_required == {'CUSTOM_TROVE'}
    assert untagged.root_forbidden == {'CUSTOM_TROVE'}


def test_a_request_that_cannot_be_placed_fails_the_way_nova_expects(nova):
    enable(nova, scheduler__filter_hosts_by_image_type_support=True,
           image_type_filter__unknown_format='reject')
    nova.package.all_filters()
    with pytest.raises(RequestFilterFailed, match="'qed'"):
        run_request_filters(nova, nova_spec('qed'))


def rebuild_filter(nova):
    return nova.package.all_filters()[0]()


@pytest.mark.parametrize('host,disk_format,passes', [
    ('vmware-host', 'vmdk', True),
    ('vmware-host', 'qcow2', False),
    ('trove-host', 'qcow2', True),
    ('trove-host', 'vmdk', False),
])
def test_a_rebuild_is_checked_against_the_hosts_traits(nova, host,
                                                       disk_format, passes):
    enable(nova, scheduler__filter_hosts_by_image_type_support=True)
    host_filter = rebuild_filter(nova)
    host_state = types.SimpleNamespace(uuid=host)
    assert host_filter.host_passes(host_state, nova_spec(
        disk_format, rebuild=True)) is passes


def test_a_rebuild_refused_on_every_host_is_novalidhost_with_the_reason(
        nova):
    """Nova calls filter_all: a rebuild no host passes raises Nova's
    NoValidHost naming why, so the server's fault says it; a rebuild
    some host passes, and every other request, keeps those that pass."""
    enable(nova, image_isolation__enabled=True,
           image_isolation__rules=['CUSTOM_TROVE'])
    host_filter = rebuild_filter(nova)
    trove = types.SimpleNamespace(uuid='trove-host')
    vmware = types.SimpleNamespace(uuid='vmware-host')
    with pytest.raises(NoValidHost) as raised:
        host_filter.filter_all([trove], nova_spec(rebuild=True))
    assert str(raised.value) == (
        "No valid host was found. The server's host cannot take the new "
        "image. The host has CUSTOM_TROVE, which the new image must not "
        "meet.")
    assert host_filter.filter_all([trove, vmware], nova_spec(
        'vmdk', rebuild=True)) == [vmware]
    boot = run_request_filters(nova, nova_spec())  # Placement filtered it
    assert list(host_filter.filter_all([trove, vmware], boot)) == [
        trove, vmware]


def test_without_novas_novalidhost_a_refused_rebuild_only_filters(
        nova, monkeypatch):
    monkeypatch.delattr(nova.modules['nova.exception'], 'NoValidHost')
    enable(nova, image_isolation__enabled=True,
           image_isolation__rules=['CUSTOM_TROVE'])
    host_filter = rebuild_filter(nova)
    trove = types.SimpleNamespace(uuid='trove-host')
    assert host_filter.filter_all([trove], nova_spec(rebuild=True)) == []


def test_a_rebuild_onto_a_reserved_host_needs_the_tag(nova):
    enable(nova, image_isolation__enabled=True,
           image_isolation__rules=['CUSTOM_TROVE'])
    host_filter = rebuild_filter(nova)
    trove = types.SimpleNamespace(uuid='trove-host')
    assert not host_filter.host_passes(trove, nova_spec(rebuild=True))
    assert host_filter.host_passes(trove, nova_spec(
        rebuild=True, traits_required=['CUSTOM_TROVE']))


def test_only_rebuilds_are_checked_and_without_a_placement_read(nova):
    enable(nova, scheduler__filter_hosts_by_image_type_support=True)
    host_filter = rebuild_filter(nova)
    before = list(nova.report.gets)
    vmware = types.SimpleNamespace(uuid='vmware-host')
    assert host_filter.host_passes(vmware, nova_spec('qcow2'))  # a boot
    assert host_filter.host_passes(vmware, nova_spec(
        'qcow2', is_bfv=True, rebuild=True))  # the image is not the disk
    assert nova.report.gets == before


def test_reserved_traits_are_created_through_novas_client_at_start(nova):
    enable(nova, image_isolation__enabled=True,
           image_isolation__rules=['CUSTOM_TROVE', 'CUSTOM_NEW'])
    nova.package.all_filters()
    assert sorted(nova.report.puts) == ['/traits/CUSTOM_NEW',
                                        '/traits/CUSTOM_TROVE']
    untagged = run_request_filters(nova, nova_spec())
    assert untagged.root_forbidden == {'CUSTOM_TROVE', 'CUSTOM_NEW'}


def test_a_format_no_host_boots_is_a_fault_naming_it(nova):
    enable(nova, scheduler__filter_hosts_by_image_type_support=True)
    nova.package.all_filters()
    with pytest.raises(RequestFilterFailed) as err:
        run_request_filters(nova, nova_spec('vhd'))
    assert err.value.reason == (
        'No compute host boots vhd images (COMPUTE_IMAGE_TYPE_VHD); this '
        'cloud boots iso, qcow2, raw, vmdk.')


def test_a_refused_rebuild_is_a_warning_naming_server_and_image(nova,
                                                                caplog):
    enable(nova, scheduler__filter_hosts_by_image_type_support=True)
    host_filter = rebuild_filter(nova)
    spec = nova_spec('qcow2', rebuild=True)
    spec.instance_uuid = 'server-1'
    spec.image.id = 'image-2'
    with caplog.at_level(logging.WARNING):
        assert not host_filter.host_passes(
            types.SimpleNamespace(uuid='vmware-host'), spec)
    assert any('server-1' in r.getMessage() and 'image-2' in r.getMessage()
               and 'COMPUTE_IMAGE_TYPE_QCOW2' in r.getMessage()
               for r in caplog.records if r.levelno == logging.WARNING)


def test_image_metadata_families_constrain_each_property_on_its_own(nova):
    """Nova's own prefilter would add nothing at all for this image (one
    name, COMPUTE_VIOMMU_INTEL, is not in os-traits)."""
    enable(nova, image_metadata_prefilter__families=[
        'storage_bus', 'viommu_model', 'architecture'])
    nova.package.all_filters()
    spec = run_request_filters(nova, nova_spec(properties={
        'hw_disk_bus': 'scsi', 'hw_viommu_model': 'intel',
        'hw_architecture': 'x86_64'}))
    assert spec.root_required == {'COMPUTE_STORAGE_BUS_SCSI',
                                  'COMPUTE_VIOMMU_MODEL_INTEL'}
    assert 'HW_ARCH_AARCH64' in spec.root_forbidden
    assert 'HW_ARCH_X86_64' not in spec.root_forbidden


def test_an_image_metadata_trait_no_host_reports_fails_naming_it(nova):
    enable(nova, image_metadata_prefilter__families=['vif_model'])
    nova.package.all_filters()
    with pytest.raises(RequestFilterFailed) as err:
        run_request_filters(nova, nova_spec(
            properties={'hw_vif_model': 'vmxnet3'}))
    assert 'COMPUTE_NET_VIF_MODEL_VMXNET3' in err.value.reason
    assert 'hw_vif_model=vmxnet3' in err.value.reason


@pytest.mark.parametrize('arch,passes', [('x86_64', True), ('i686', True),
                                         ('aarch64', False)])
def test_a_rebuild_checks_the_new_images_architecture(nova, arch, passes):
    enable(nova, image_metadata_prefilter__families=['architecture'])
    host_filter = rebuild_filter(nova)
    vmware = types.SimpleNamespace(uuid='vmware-host')  # HW_ARCH_X86_64
    assert host_filter.host_passes(vmware, nova_spec(
        'vmdk', rebuild=True,
        properties={'hw_architecture': arch})) is passes


def test_an_architecture_no_host_runs_fails_naming_its_trait(nova):
    """Both hosts report HW_ARCH_X86_64: an aarch64 image is refused
    before Placement, naming the trait (Nova's own fault would be bare)."""
    enable(nova, image_metadata_prefilter__families=['architecture'])
    nova.package.all_filters()
    with pytest.raises(RequestFilterFailed) as err:
        run_request_filters(nova, nova_spec(
            properties={'hw_architecture': 'aarch64'}))
    assert err.value.reason == (
        'No compute host reports HW_ARCH_AARCH64, which the image needs for '
        'hw_architecture=aarch64, image_metadata_prefilter family '
        'architecture; each one reports another HW_ARCH_* trait.')


# -- log-only: [image_type_filter] enforce = False ------------------------

ALL_ON = dict(scheduler__filter_hosts_by_image_type_support=True,
              image_isolation__enabled=True,
              image_isolation__rules=['CUSTOM_TROVE'],
              image_metadata_prefilter__families=['storage_bus'])


def log_only_lines(caplog):
    from image_type_filter.scheduler import log_only
    return [r for r in caplog.records
            if log_only.PATTERN.fullmatch(r.getMessage())]


def test_log_only_changes_no_request_and_logs_one_line_each(nova, caplog):
    enable(nova, image_type_filter__enforce=False, **ALL_ON)
    nova.package.all_filters()
    specs = [nova_spec('vmdk', properties={'hw_disk_bus': 'scsi'},
                       server='s-vmdk'),
             nova_spec('qcow2', traits_required=['CUSTOM_TROVE'],
                       server='s-trove')]
    with caplog.at_level(logging.INFO):
        for spec in specs:
            run_request_filters(nova, spec)
    for spec in specs:
        assert (spec.root_required, spec.root_forbidden) == (set(), set())
    lines = log_only_lines(caplog)
    assert [(r.levelno, r.getMessage()) for r in lines] == [
        (logging.INFO, 'image-type-filter log-only: server s-vmdk: would '
         'add: root_required=COMPUTE_IMAGE_TYPE_VMDK,'
         'COMPUTE_STORAGE_BUS_SCSI root_forbidden=CUSTOM_TROVE'),
        (logging.INFO, 'image-type-filter log-only: server s-trove: would '
         'add: root_required=COMPUTE_IMAGE_TYPE_QCOW2,CUSTOM_TROVE')]


def test_log_only_refuses_nothing_and_says_what_it_would(nova, caplog):
    enable(nova, image_type_filter__enforce=False,
           image_type_filter__unknown_format='reject', **ALL_ON)
    nova.package.all_filters()
    with caplog.at_level(logging.INFO):
        qed = run_request_filters(nova, nova_spec('qed', server='s-qed'))
        vhd = run_request_filters(nova, nova_spec('vhd', server='s-vhd'))
    assert qed.root_required == vhd.root_required == set()
    messages = [r.getMessage() for r in log_only_lines(caplog)]
    assert messages[0].startswith(
        "image-type-filter log-only: server s-qed: would refuse: image "
        "disk_format 'qed' is not a known image type")
    assert messages[1] == (
        'image-type-filter log-only: server s-vhd: would refuse: No compute '
        'host boots vhd images (COMPUTE_IMAGE_TYPE_VHD); this cloud boots '
        'iso, qcow2, raw, vmdk.')


def test_log_only_rebuild_passes_and_logs_the_refusal(nova, caplog):
    enable(nova, image_type_filter__enforce=False, **ALL_ON)
    host_filter = rebuild_filter(nova)
    spec = nova_spec('qcow2', rebuild=True, server='s-rebuild')
    spec.image.id = 'image-2'
    with caplog.at_level(logging.INFO):
        assert host_filter.host_passes(
            types.SimpleNamespace(uuid='vmware-host'), spec)
    assert [r.getMessage() for r in log_only_lines(caplog)] == [
        'image-type-filter log-only: server s-rebuild: would refuse: '
        'rebuild to image image-2 on host vmware-host: the new image needs '
        'COMPUTE_IMAGE_TYPE_QCOW2']
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING
                and 'refused' in r.getMessage()]



FORBIDDEN = (403, 'Policy does not allow '
             'placement:resource_providers:traits:list to be performed.')


@pytest.mark.parametrize('failure', [
    FORBIDDEN, ks_exc.ConnectFailure('Connection refused')],
    ids=['403', 'unreachable'])
@pytest.mark.parametrize('options,passes,level', [
    (dict(image_isolation__enabled=True,
          image_isolation__rules=['CUSTOM_TROVE']), False, logging.ERROR),
    (dict(scheduler__filter_hosts_by_image_type_support=True), True,
     logging.WARNING),
    (dict(ALL_ON, image_type_filter__enforce=False), True, logging.WARNING),
], ids=['isolation enforced', 'image types only', 'log-only'])
def test_a_rebuild_whose_host_placement_cannot_read(nova, caplog, failure,
                                                    options, passes, level):
    """Isolation enforced: refused, as a reserved host must never take an
    image unchecked. Otherwise: let through, as Nova alone would. One line
    naming Placement and the server either way, and no exception out of
    nova-scheduler's host filter."""
    enable(nova, **options)
    host_filter = rebuild_filter(nova)
    caplog.clear()  # start-up's lines
    nova.report.traits_failure = failure
    spec = nova_spec('qcow2', rebuild=True, server='s-rebuild')
    spec.image.id = 'image-2'
    with caplog.at_level(logging.INFO):
        assert host_filter.host_passes(
            types.SimpleNamespace(uuid='trove-host'), spec) is passes
    [line] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.levelno == level
    message = line.getMessage()
    assert message.startswith(
        'rebuild of server s-rebuild to image image-2 %s on host trove-host: '
        'its traits could not be read from Placement (' % (
            'not checked' if passes else 'refused'))
    assert ('(403' if failure is FORBIDDEN else 'Connection refused') in (
        message)
    assert not log_only_lines(caplog)

# -- a Nova where an internal moved ----------------------------------------

def errors(caplog):
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.ERROR]


@pytest.fixture
def nova_35(nova, monkeypatch):
    monkeypatch.setattr(sys.modules['image_type_filter.nova.compat'],
                        'nova_version', lambda: '35.0.0')
    return nova


@pytest.mark.parametrize('module,name', [
    ('nova.scheduler.request_filter', 'ALL_REQUEST_FILTERS'),
    ('nova.exception', 'RequestFilterFailed'),
    ('nova.scheduler.filters', 'BaseHostFilter'),
    ('nova.scheduler.utils', 'request_is_rebuild'),
])
def test_a_missing_name_under_isolation_stops_start_up_with_one_line(
        nova_35, monkeypatch, caplog, module, name):
    monkeypatch.delattr(nova_35.modules[module], name)
    enable(nova_35, **ALL_ON)
    compat = sys.modules['image_type_filter.nova.compat']
    with pytest.raises(compat.NovaIncompatible):
        nova_35.package.all_filters()
    [line] = errors(caplog)
    assert 'Nova 35.0.0' in line
    assert '%s.%s' % (module, name) in line
    assert 'nova-scheduler stops here' in line
    assert not nova_35.integration.installed_filters()


def test_a_missing_name_without_isolation_runs_as_nova_alone(
        nova_35, monkeypatch, caplog):
    monkeypatch.delattr(nova_35.modules['nova.scheduler.request_filter'],
                        'ALL_REQUEST_FILTERS')
    enable(nova_35, scheduler__filter_hosts_by_image_type_support=True)
    classes = nova_35.package.all_filters()
    [line] = errors(caplog)
    assert 'Nova 35.0.0' in line and 'ALL_REQUEST_FILTERS' in line
    assert 'runs without them' in line
    # The rebuild filter is there (enabled_filters names it) and passes.
    assert classes[0]().host_passes(types.SimpleNamespace(
        uuid='vmware-host'), nova_spec('qcow2', rebuild=True))


def test_a_list_that_is_no_longer_a_list_counts_as_missing(
        nova_35, monkeypatch, caplog):
    monkeypatch.setattr(nova_35.modules['nova.scheduler.request_filter'],
                        'ALL_REQUEST_FILTERS', ())
    enable(nova_35, **ALL_ON)
    with pytest.raises(Exception, match='ALL_REQUEST_FILTERS .is not a '
                                        'list.'):
        nova_35.package.all_filters()


def test_no_nova_at_all_is_one_line_not_an_import_error(
        nova_35, monkeypatch, caplog):
    for name in [m for m in nova_35.modules if m.startswith('nova')]:
        monkeypatch.setitem(sys.modules, name, None)
    compat = sys.modules['image_type_filter.nova.compat']
    with pytest.raises(compat.NovaIncompatible):
        nova_35.package.all_filters()
    [line] = errors(caplog)
    assert 'module nova.conf (ModuleNotFoundError' in line
    assert 'field' not in line  # the objects' modules are named instead


def test_a_field_nova_renamed_is_a_missing_name(nova_35, monkeypatch,
                                                caplog):
    """Not a silent pass: without it the filters would read nothing."""
    monkeypatch.delattr(
        nova_35.modules['nova.objects.request_spec'].RequestSpec, 'is_bfv')
    enable(nova_35, scheduler__filter_hosts_by_image_type_support=True)
    nova_35.package.all_filters()
    [line] = errors(caplog)
    assert 'nova.objects.request_spec.RequestSpec.is_bfv' in line
    assert 'runs without them' in line
    assert not nova_35.integration.installed_filters()


def test_a_missing_optional_name_is_a_warning_and_the_filters_run(
        nova, monkeypatch, caplog):
    monkeypatch.delattr(nova.modules['nova.scheduler.request_filter'],
                        'trace_request_filter')
    enable(nova, scheduler__filter_hosts_by_image_type_support=True)
    nova.package.all_filters()
    assert errors(caplog) == []
    assert any('trace_request_filter' in r.getMessage()
               for r in caplog.records if r.levelno == logging.WARNING)
    assert run_request_filters(nova, nova_spec('raw')).root_required == {
        'COMPUTE_IMAGE_TYPE_RAW'}


def test_a_nova_outside_the_supported_range_is_named(nova_35, caplog):
    enable(nova_35, scheduler__filter_hosts_by_image_type_support=True)
    nova_35.package.all_filters()
    assert any('not tested with Nova 35.0.0' in r.getMessage()
               for r in caplog.records if r.levelno == logging.WARNING)


def test_isolation_needs_the_rebuild_filter_enabled(nova, caplog):
    enable(nova, filter_scheduler__enabled_filters=['ComputeFilter'],
           **ALL_ON)
    from image_type_common import exceptions
    with pytest.raises(exceptions.ConfigError,
                       match='ImageTypeRebuildFilter is not in'):
        nova.package.all_filters()
    assert len(errors(caplog)) == 1


# -- a Nova that stops running ALL_REQUEST_FILTERS -------------------------

def host_filter_on_requests_nova_did_not_filter(nova, **options):
    enable(nova, **options)
    host_filter = nova.package.all_filters()[0]()
    spec = nova_spec('qcow2', server='s-unfiltered')
    hosts = [types.SimpleNamespace(uuid=u) for u in ('vmware-host',
                                                     'trove-host')]
    return [host_filter.host_passes(h, spec) for h in hosts]


def test_unfiltered_requests_under_isolation_get_no_host(nova, caplog):
    assert host_filter_on_requests_nova_did_not_filter(
        nova, **ALL_ON) == [False, False]
    [line] = errors(caplog)  # once per request, not per host
    assert 'did not run its request filters' in line
    assert 's-unfiltered' in line and 'every host is refused' in line


def test_unfiltered_requests_without_isolation_pass_with_one_error(
        nova, caplog):
    for _ in range(3):
        assert host_filter_on_requests_nova_did_not_filter(
            nova, scheduler__filter_hosts_by_image_type_support=True) == [
                True, True]
    [line] = errors(caplog)  # once, not per request
    assert 'scheduled without them' in line


def test_requests_nova_filtered_pass_without_a_word(nova, caplog):
    enable(nova, **ALL_ON)
    host_filter = nova.package.all_filters()[0]()
    spec = run_request_filters(nova, nova_spec('qcow2'))
    assert host_filter.host_passes(types.SimpleNamespace(uuid='trove-host'),
                                   spec)
    assert errors(caplog) == []
    # Remembered in a registry of ours, not as a mark on Nova's object.
    assert [name for name in vars(spec) if name.startswith('_')] == []
