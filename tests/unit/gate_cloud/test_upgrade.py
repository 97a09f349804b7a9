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

"""The upgrade phase without a cloud: every service has its place in the
walk, the walk is Nova's documented order, the steps are the documented
ones, and a boot's queries are judged by what the filters must add."""

import contextlib
import pathlib
import re
import types

import pytest

from gate_cloud import cloud
from gate_cloud import context
from gate_cloud import layout
from gate_cloud import reporter_removal
from gate_cloud import rollback
from gate_cloud import upgrade
from gate_cloud.processes import GateError

UPGRADE_DOC = layout.REPO / 'doc' / 'source' / 'install' / 'upgrade.rst'
#: Nova's upgrade guide (its admin guide's "Upgrades" page): "start
#: nova-conductor first and nova-api last".
NOVA_GUIDE_ORDER = ['nova-conductor', 'nova-scheduler', 'nova-api']


def documented(module_name, path=UPGRADE_DOC):
    """The bold titles of the enumerated list that follows ``..
    gate-steps: <module>`` in the page."""
    text = pathlib.Path(path).read_text()
    marker = '.. gate-steps: %s\n' % module_name
    assert marker in text, 'no %r list in %s' % (marker.strip(), path)
    after = text.split(marker, 1)[1].lstrip('\n')
    items = []
    for line in after.splitlines():
        if line.startswith('#. '):
            items.append(line[3:])
        elif line.startswith('   ') and items:
            items[-1] += ' ' + line.strip()
        elif line.strip() and items:
            break
    titles = []
    for item in items:
        bold = re.match(r'\*\*(.+?)\*\*', item)
        assert bold, 'a step without a bold title: %r' % item[:60]
        titles.append(' '.join(bold.group(1).split()).rstrip('.'))
    return titles


def test_the_documented_upgrade_is_the_one_the_gate_runs():
    assert documented('gate_cloud.upgrade') == upgrade.titles(
        cloud.SERVICES, operator_only=True)


def test_the_documented_rollback_is_the_one_the_gate_runs():
    assert documented('gate_cloud.rollback') == rollback.titles(
        operator_only=True)


def test_the_documented_reporter_removal_is_the_one_the_gate_runs():
    assert documented('gate_cloud.reporter_removal') == \
        reporter_removal.titles(operator_only=True)


def test_a_step_out_of_order_in_the_page_is_seen(tmp_path):
    page = tmp_path / 'upgrade.rst'
    text = UPGRADE_DOC.read_text()
    first, second = [t for t in upgrade.titles(cloud.SERVICES, True)][4:6]
    page.write_text(text.replace('**%s.**' % first, '**@@.**').replace(
        '**%s.**' % second, '**%s.**' % first).replace(
        '**@@.**', '**%s.**' % second))
    assert documented('gate_cloud.upgrade', page) != upgrade.titles(
        cloud.SERVICES, operator_only=True)


def test_every_service_says_where_it_moves():
    for svc in cloud.SERVICES:
        assert upgrade.stage_of(svc) in upgrade.STAGES, svc.NAME
    upgrade.check_plan(cloud.SERVICES)


def test_a_service_that_says_nothing_stops_the_upgrade():
    silent = types.SimpleNamespace(NAME='ironic', NEEDS=(), PORTS={})
    with pytest.raises(GateError, match='ironic says nowhere'):
        upgrade.check_plan(cloud.SERVICES + (silent,))


def test_nova_moves_in_its_guides_order_and_computes_last():
    assert list(upgrade.NOVA_ORDER) == NOVA_GUIDE_ORDER
    nova = {s.NAME for s in upgrade.services_in(cloud.SERVICES,
                                                upgrade.NOVA)}
    assert nova == set(NOVA_GUIDE_ORDER)
    titles = upgrade.titles(cloud.SERVICES)
    at = {title: n for n, title in enumerate(titles)}
    services_first = at['Upgrade the services Nova calls']
    schemas = at['Sync Nova\'s database schemas']
    check = at['Run nova-status upgrade check']
    restarts = [at['Restart %s on the new release' % name]
                for name in NOVA_GUIDE_ORDER]
    computes = at['Upgrade each compute node in turn, its reporter after it']
    migrations = at['Run the online data migrations']
    assert services_first < schemas < check < restarts[0]
    assert restarts == sorted(restarts)
    assert restarts[-1] < computes < migrations
    # Placement (Nova's guide: before any Nova service) moves in the first.
    first = [s.NAME for s in upgrade.services_in(cloud.SERVICES,
                                                 upgrade.BEFORE_NOVA)]
    assert 'placement' in first and 'keystone' in first
    per_compute = [s.NAME for s in upgrade.services_in(
        cloud.SERVICES, upgrade.PER_COMPUTE)]
    assert per_compute == ['nova-compute', 'reporters']


def test_only_debians_services_stay_behind():
    """MariaDB, RabbitMQ and libvirtd come from Debian, not from a series:
    everything else runs from its series' virtualenv and must move."""
    kept = {s.NAME for s in upgrade.services_in(cloud.SERVICES,
                                                upgrade.KEPT)}
    assert kept == {'mariadb', 'rabbitmq', 'libvirt'}
    for name in kept:
        assert cloud.SERVICES[[s.NAME for s in cloud.SERVICES].index(
            name)].DEBIAN, name


def fake_upgrade(source='2026.1', to='2026.2'):
    ctx = context.Cloud(cloud.SERVICES, {}, {
        name: source for name in [s.NAME for s in cloud.SERVICES]
        + [context.CLIENTS]})
    return upgrade.Upgrade(ctx, {'computes': [], 'reserved_trait':
                                 'CUSTOM_TROVE'}, to)


def query(*traits, required=()):
    return {'root_required': list(traits), 'required': list(required)}


def found(*pairs):
    from gate_cloud import boot_cases
    return [(boot_cases.Case(label, 'img', frozenset({'h'})), None, queries)
            for label, queries in pairs]


def test_the_owner_nova_window_is_expected_from_33_to_34_only():
    assert fake_upgrade('2026.1', '2026.2').owner_switch
    assert not fake_upgrade('2026.2', '2026.2').owner_switch


def test_a_query_without_the_formats_trait_fails_the_probe():
    up = fake_upgrade()
    good = found(('qcow2', [query('COMPUTE_IMAGE_TYPE_QCOW2',
                                  '!CUSTOM_TROVE')]),
                 ('reserved', [query('COMPUTE_IMAGE_TYPE_RAW',
                                     required=['CUSTOM_TROVE'])]))
    up.check_queries(good, owner_nova=False, label='x')
    with pytest.raises(GateError, match='lacks COMPUTE_IMAGE_TYPE_ISO'):
        up.check_queries(found(('iso', [query('!CUSTOM_TROVE')])),
                         owner_nova=False, label='x')
    with pytest.raises(GateError, match='made no allocation-candidate'):
        up.check_queries(found(('iso', [])), owner_nova=False, label='x')


def test_owner_nova_must_be_in_the_query_exactly_when_expected():
    up = fake_upgrade()
    with_owner = found(('raw', [query('COMPUTE_IMAGE_TYPE_RAW',
                                      'OWNER_NOVA')]))
    without = found(('raw', [query('COMPUTE_IMAGE_TYPE_RAW')]))
    up.check_queries(with_owner, owner_nova=True, label='after')
    up.check_queries(without, owner_nova=False, label='beside')
    with pytest.raises(GateError, match='lacks OWNER_NOVA'):
        up.check_queries(without, owner_nova=True, label='after')
    with pytest.raises(GateError, match='has OWNER_NOVA'):
        up.check_queries(with_owner, owner_nova=False, label='beside')


def test_a_trait_lost_at_any_step_is_kept_for_the_verdict(monkeypatch):
    up = fake_upgrade()
    up.before = {'fake-trove': ['COMPUTE_NODE', 'CUSTOM_TROVE'],
                 'vm': ['COMPUTE_IMAGE_TYPE_QCOW2']}
    answers = iter([
        {'fake-trove': ['COMPUTE_NODE'], 'vm': ['COMPUTE_IMAGE_TYPE_QCOW2']},
        {'fake-trove': ['COMPUTE_NODE', 'CUSTOM_TROVE'],
         'vm': ['COMPUTE_IMAGE_TYPE_QCOW2', 'OWNER_NOVA']},
    ])
    monkeypatch.setattr(upgrade.rest, 'all_traits',
                        lambda admin: next(answers))
    monkeypatch.setattr(context.Cloud, 'admin', None)
    up.traits_check('after nova-compute fake-trove')
    up.traits_check('at the end')  # back again: the loss stays recorded
    assert up.lost == {'fake-trove': {
        'after nova-compute fake-trove': ['CUSTOM_TROVE']}}
    assert up.gained == {'vm': ['OWNER_NOVA']}
    figures = {'traits_lost': up.lost, 'stream': {'failures': []}}
    assert upgrade.verdict(figures) == [
        'traits lost: %s' % up.lost]


def test_an_rpc_worker_is_drained_before_it_stops_an_api_is_not(
        monkeypatch):
    up = fake_upgrade()
    calls = []
    held = []

    @contextlib.contextmanager
    def drained():
        held.append(True)
        yield
        held.pop()
    up.stream = types.SimpleNamespace(drained=drained)
    monkeypatch.setattr(upgrade.cloud_mod, 'restart',
                        lambda ctx, name, series, hosts=None, drain=None:
                        calls.append((name, series, hosts, drain, bool(held))))
    waited = []
    monkeypatch.setattr(up, 'computes_report_again',
                        lambda since: waited.append(bool(held)))
    up.restart('nova-conductor')
    up.restart('nova-api')
    up.restart('nova-compute', hosts=['fake-raw'])
    up.restart('placement')
    # The conductor drained for its stop; a compute node held out of
    # rotation for its whole restart (its start errors out a build placed
    # on it meanwhile); the APIs not at all.
    assert calls == [('nova-conductor', '2026.2', None, drained, False),
                     ('nova-api', '2026.2', None, None, False),
                     ('nova-compute', '2026.2', ['fake-raw'], None, True),
                     ('placement', '2026.2', None, None, False)]
    assert [name for name, _, _ in up.windows.spans] == [
        'nova-conductor', 'nova-api', 'nova-compute', 'placement']
    # After nova-conductor alone, the stream held until every compute
    # reported in through the new conductor.
    assert waited == [True]


def test_the_walk_runs_every_step_in_order_and_stops_at_a_failure(
        monkeypatch):
    ran = []
    for _, action, _ in upgrade.steps(cloud.SERVICES):
        if action in upgrade.NOVA_ORDER:
            continue
        monkeypatch.setattr(upgrade.Upgrade, action,
                            lambda self, a=action: ran.append(a))
    monkeypatch.setattr(upgrade.Upgrade, 'nova_service',
                        lambda self, name: lambda: ran.append(name))
    up = fake_upgrade()
    figures = upgrade.run(up.ctx, up.cloud, '2026.2')
    assert ran == [action for _, action, _ in upgrade.steps(
        cloud.SERVICES)]
    assert figures['error'] is None
    assert [s['step'] for s in figures['steps']] == upgrade.titles(
        cloud.SERVICES)

    ran.clear()

    def fails(self):
        raise GateError('nova-status upgrade check (2026.2) exited 2')
    monkeypatch.setattr(upgrade.Upgrade, 'nova_status', fails)
    figures = upgrade.run(up.ctx, up.cloud, '2026.2')
    assert ran[-1] == 'nova_schemas'
    assert 'Run nova-status upgrade check' in figures['error']
    assert upgrade.verdict(figures) == [figures['error']]
