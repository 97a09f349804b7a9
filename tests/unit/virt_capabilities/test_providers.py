"""Provider lookup: defaults, validation, waiting with jittered back-off."""

import pytest

from image_type_common import exceptions
from virt_capabilities import providers
from virt_capabilities import settings

node = settings.NodeSettings.from_conf


class FakeClock:
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds

    def __call__(self):
        return self.now


class AppearsLater:
    """A client whose provider shows up after some lookups."""

    def __init__(self, after, fail_with=None):
        self.after, self.calls, self.fail_with = after, 0, fail_with

    def list_resource_providers(self, **filters):
        self.calls += 1
        if self.fail_with and self.calls <= self.after:
            raise self.fail_with
        if self.calls > self.after:
            return [{'uuid': 'u-1', 'name': filters.get('name')}]
        return []


def test_waits_with_bounded_jittered_back_off():
    clock = FakeClock()
    ref = providers.validate('node1', '--provider')
    uuids, missing = providers.resolve_with_wait(
        AppearsLater(after=6), [ref], wait=100, sleep=clock.sleep,
        clock=clock)
    assert (uuids, missing) == (['u-1'], [])
    assert len(clock.sleeps) == 6
    for attempt, delay in enumerate(clock.sleeps):
        base = 0.5 * 2 ** min(attempt, 5)
        assert base * 0.5 <= delay <= base


def test_gives_up_at_the_deadline_naming_what_was_looked_for():
    clock = FakeClock()
    ref = providers.validate('node1', '[DEFAULT] host')
    with pytest.raises(exceptions.ProviderNotFound,
                       match=r"name 'node1' \(from \[DEFAULT\] host\).*"
                             r"waited 5 s"):
        providers.resolve_with_wait(AppearsLater(after=99), [ref], wait=5,
                                    sleep=clock.sleep, clock=clock)
    assert clock.now <= 5


def test_unreachable_placement_is_waited_for_too():
    clock = FakeClock()
    client = AppearsLater(after=2, fail_with=exceptions.PlacementUnavailable(
        'cannot reach Placement: refused'))
    assert providers.resolve_with_wait(
        client, [providers.validate('n', 'x')], wait=60, sleep=clock.sleep,
        clock=clock) == (['u-1'], [])


class SomeExist:
    """A client that knows only some provider names."""

    def __init__(self, names):
        self.names = names

    def list_resource_providers(self, **filters):
        name = filters.get('name')
        return [{'uuid': 'u-' + name, 'name': name}] if name in self.names \
            else []


def test_at_the_deadline_the_found_ones_come_back_with_the_missing():
    clock = FakeClock()
    refs = [providers.validate(n, '--provider') for n in ('a', 'ghost', 'b')]
    uuids, missing = providers.resolve_with_wait(
        SomeExist({'a', 'b'}), refs, wait=3, sleep=clock.sleep, clock=clock)
    assert uuids == ['u-a', 'u-b']
    assert [r.value for r in missing] == ['ghost']


@pytest.mark.parametrize('value,message', [
    ('', 'empty'), ('x' * 201, 'longer than'), ('a\x00b', 'control'),
])
def test_validation(value, message):
    with pytest.raises(exceptions.ConfigError, match=message):
        providers.validate(value, '--provider')


def test_compute_id_file_must_hold_a_uuid(write_conf, tmp_path):
    from virt_capabilities import conf as vc_conf
    (tmp_path / 'compute_id').write_text('not-a-uuid\n')
    conf = vc_conf.load([write_conf('compute_driver = fake.FakeDriver\n')])
    with pytest.raises(exceptions.ConfigError, match='does not hold a uuid'):
        providers.default_refs(node(conf), 'fake.FakeDriver')


def test_fake_driver_node_is_host_without_compute_id(write_conf):
    from virt_capabilities import conf as vc_conf
    conf = vc_conf.load([write_conf('compute_driver = fake.FakeDriver\n'
                                    'host = cmp-7\n')])
    assert providers.default_refs(node(conf), 'fake.FakeDriver') == [
        providers.ProviderRef('cmp-7', '[DEFAULT] host')]


def test_compute_id_comes_first_for_every_driver(write_conf, tmp_path):
    from virt_capabilities import conf as vc_conf
    uuid = '7d1a5f0e-2b3c-4d5e-8f90-a1b2c3d4e5f6'
    (tmp_path / 'compute_id').write_text(uuid + '\n')
    conf = vc_conf.load([write_conf('compute_driver = fake.FakeDriver\n')])
    for driver in ('libvirt.LibvirtDriver', 'vmwareapi.VMwareVCDriver'):
        refs = providers.default_refs(node(conf), driver)
        assert [r.value for r in refs] == [uuid]


def test_libvirt_node_is_the_hypervisor_hostname_not_host(write_conf,
                                                          monkeypatch):
    from virt_capabilities import conf as vc_conf
    monkeypatch.setattr(providers, 'libvirt_hostname', lambda: 'hv1.example')
    conf = vc_conf.load([write_conf('compute_driver = fake.FakeDriver\n'
                                    'host = service-name\n')])
    assert providers.default_refs(node(conf), 'libvirt.LibvirtDriver') == [
        providers.ProviderRef('hv1.example', 'the hostname libvirt reports')]


@pytest.mark.parametrize('hostname,canonical,expected', [
    ('hv1.example.org', 'other', 'hv1.example.org'),   # qualified: as is
    ('hv1', 'hv1.example.org', 'hv1.example.org'),      # else canonical
    ('hv1', None, 'hv1'),                               # does not resolve
    ('localhost', 'x.example', 'localhost'),
])
def test_libvirt_hostname_follows_libvirts_rule(monkeypatch, hostname,
                                                canonical, expected):
    monkeypatch.setattr(providers.socket, 'gethostname', lambda: hostname)

    def getaddrinfo(name, port, flags=0):
        if canonical is None:
            raise OSError('no such host')
        return [(2, 1, 6, canonical, ('10.0.0.1', 0))]
    monkeypatch.setattr(providers.socket, 'getaddrinfo', getaddrinfo)
    assert providers.libvirt_hostname() == expected


@pytest.mark.parametrize('driver,says', [
    ('vmwareapi.VMwareVCDriver', 'cluster moref'),
    ('ironic.IronicDriver', 'node uuid'),
    ('zvm.ZVMDriver', 'cloud connector'),
])
def test_drivers_named_by_the_hypervisor_need_provider(write_conf, driver,
                                                       says):
    from virt_capabilities import conf as vc_conf
    conf = vc_conf.load([write_conf('compute_driver = %s\nhost = h\n'
                                    % driver)])
    with pytest.raises(providers.ProviderNeeded, match=says) as err:
        providers.default_refs(node(conf), driver)
    assert '--provider' in str(err.value)
