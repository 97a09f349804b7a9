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

"""Provider lookup: defaults, validation, waiting with jittered back-off."""

import pytest

from image_type_common import exceptions
from virt_capabilities import drivers
from virt_capabilities import providers
from virt_capabilities import settings

node = settings.NodeSettings.from_conf

FAKE = drivers.DRIVERS['fake.FakeDriver']
LIBVIRT = drivers.DRIVERS['libvirt.LibvirtDriver']


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
        providers.default_refs(node(conf), FAKE)


def test_fake_driver_node_is_host_without_compute_id(write_conf):
    from virt_capabilities import conf as vc_conf
    conf = vc_conf.load([write_conf('compute_driver = fake.FakeDriver\n'
                                    'host = cmp-7\n')])
    assert providers.default_refs(node(conf), FAKE) == [
        providers.ProviderRef('cmp-7', '[DEFAULT] host')]


def test_compute_id_comes_first_for_every_driver(write_conf, tmp_path):
    from virt_capabilities import conf as vc_conf
    uuid = '7d1a5f0e-2b3c-4d5e-8f90-a1b2c3d4e5f6'
    (tmp_path / 'compute_id').write_text(uuid + '\n')
    conf = vc_conf.load([write_conf('compute_driver = fake.FakeDriver\n')])
    for driver in ('libvirt.LibvirtDriver', 'vmwareapi.VMwareVCDriver'):
        refs = providers.default_refs(node(conf), drivers.DRIVERS[driver])
        assert [r.value for r in refs] == [uuid]


def test_libvirt_node_is_the_hypervisor_hostname_not_host(write_conf,
                                                          monkeypatch):
    from virt_capabilities import conf as vc_conf
    monkeypatch.setattr(providers, 'libvirt_hostname', lambda: 'hv1.example')
    conf = vc_conf.load([write_conf('compute_driver = fake.FakeDriver\n'
                                    'host = service-name\n')])
    assert providers.default_refs(node(conf), LIBVIRT) == [
        providers.ProviderRef('hv1.example',
                              "this machine's hostname, by libvirt's rule")]


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
        providers.default_refs(node(conf), drivers.DRIVERS[driver])
    assert '--provider' in str(err.value)


# -- compute_id: where nova-compute finds it, refused where it refuses ------
# Nova 34's nova/virt/node.py read_local_node_uuid (53-88): the directory of
# each --config-file, then state_path; the first 40 characters, stripped,
# must parse as a uuid; every file found must hold the same one.

NODE_UUID = '7d1a5f0e-2b3c-4d5e-8f90-a1b2c3d4e5f6'
OTHER_UUID = '0b5e2c1d-9a8f-4e7d-a6c5-b4a3f2e1d0c9'


def layout(tmp_path, beside_conf=None, in_state_path=None, state=True,
           conf_dir=None):
    """/etc/nova/nova.conf and /var/lib/nova as a deployment lays them out,
    with compute_id files holding these contents; the plan's refs."""
    from virt_capabilities import plan
    etc, var = tmp_path / 'etc-nova', tmp_path / 'var-lib-nova'
    etc.mkdir()
    var.mkdir()
    conf = etc / 'nova.conf'
    conf.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\n'
                    'host = by-host-name\n'
                    + ('state_path = %s\n' % var if state else ''))
    dirs = []
    if conf_dir is not None:
        (etc / 'nova.conf.d').mkdir()
        (etc / 'nova.conf.d' / 'compute_id').write_text(conf_dir)
        dirs = [str(etc / 'nova.conf.d')]
    if beside_conf is not None:
        (etc / 'compute_id').write_text(beside_conf)
    if in_state_path is not None:
        (var / 'compute_id').write_text(in_state_path)
    return plan.NodePlan.from_files([str(conf)], config_dirs=dirs).refs


def test_compute_id_beside_nova_conf_is_found(tmp_path):
    [ref] = layout(tmp_path, beside_conf=NODE_UUID + '\n')
    assert ref.value == NODE_UUID
    assert ref.source == 'compute_id file %s' % (
        tmp_path / 'etc-nova' / 'compute_id')


def test_compute_id_in_both_places_must_agree(tmp_path):
    [ref] = layout(tmp_path, beside_conf=NODE_UUID,
                   in_state_path=NODE_UUID + '\n')
    assert ref.value == NODE_UUID
    assert 'etc-nova' in ref.source  # the config file's directory first


def test_compute_ids_that_disagree_are_refused_naming_both(tmp_path):
    with pytest.raises(exceptions.ConfigError) as caught:
        layout(tmp_path, beside_conf=NODE_UUID, in_state_path=OTHER_UUID)
    message = str(caught.value)
    assert NODE_UUID in message and OTHER_UUID in message
    assert 'etc-nova' in message and 'var-lib-nova' in message


@pytest.mark.parametrize('content', ['', '\n', '   \n', 'not-a-uuid\n',
                                     NODE_UUID[:-1], NODE_UUID + '\nx'],
                         ids=['empty', 'newline', 'blank', 'words',
                              'short', 'junk-within-40'])
@pytest.mark.parametrize('where', ['beside_conf', 'in_state_path'])
def test_a_compute_id_nova_compute_refuses_is_refused(tmp_path, content,
                                                      where):
    """Not a fallback to the host name: nova-compute does not start."""
    with pytest.raises(exceptions.ConfigError) as caught:
        layout(tmp_path, **{where: content})
    message = str(caught.value)
    assert 'compute_id' in message and 'uuid' in message
    assert '\n' not in message


@pytest.mark.parametrize('content', [
    NODE_UUID.upper(), '{%s}' % NODE_UUID, NODE_UUID.replace('-', ''),
    '  %s  \n\n' % NODE_UUID, NODE_UUID + '\n' * 4 + 'after the 40th'],
    ids=['upper', 'braces', 'hex', 'spaces', 'junk-after-40'])
def test_compute_id_is_read_as_nova_reads_it(tmp_path, content):
    [ref] = layout(tmp_path, in_state_path=content)
    assert ref.value == NODE_UUID  # canonical, as nova-compute uses it


def test_compute_id_in_a_config_dir_is_not_nova_computes(tmp_path):
    """nova-compute reads only the config files' directories (CONF.
    config_file), not those of --config-dir."""
    [ref] = layout(tmp_path, conf_dir=NODE_UUID)
    assert ref.value == 'by-host-name'


def test_without_state_path_compute_id_beside_nova_conf_counts(tmp_path):
    [ref] = layout(tmp_path, beside_conf=NODE_UUID, state=False)
    assert ref.value == NODE_UUID
