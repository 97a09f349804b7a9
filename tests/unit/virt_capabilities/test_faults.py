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

"""Error paths a real Placement cannot be made to produce (requests-mock).

5xx answers, timeouts and dropped connections: bounded retries, a clear
error at the end, and never a write from an incomplete view.
"""

from keystoneauth1 import adapter
from keystoneauth1 import session
from keystoneauth1 import token_endpoint
import pytest
import requests

from image_type_common import backoff
from image_type_common import exceptions
from image_type_common import placement_client
from tests import helpers
from virt_capabilities import reporter as reporter_mod

ENDPOINT = 'http://127.0.0.1:8778'
UUID = '7d1a5f0e-2b3c-4d5e-8f90-a1b2c3d4e5f6'
TRAITS_URL = '%s/resource_providers/%s/traits' % (ENDPOINT, UUID)
RAW = 'COMPUTE_IMAGE_TYPE_RAW'
RULE = helpers.image_type_rule({RAW})
VERSIONS = {'versions': [{'id': 'v1.0', 'max_version': '1.39',
                          'min_version': '1.0', 'status': 'CURRENT'}]}


@pytest.fixture
def mock(requests_mock):
    requests_mock.get(ENDPOINT + '/', json=VERSIONS)
    return requests_mock


def make_client(retries=2):
    sess = session.Session(auth=token_endpoint.Token(ENDPOINT, 'admin'))
    return placement_client.PlacementClient(adapter.Adapter(
        sess, service_type='placement', connect_retries=retries,
        status_code_retries=retries, retriable_status_codes=[502, 503, 504],
        connect_retry_delay=0.001, status_code_retry_delay=0.001))


def traits_body(traits, generation=1):
    return {'traits': sorted(traits), 'resource_provider_generation':
            generation}


def puts(mock):
    return [r for r in mock.request_history if r.method == 'PUT']


def test_503_is_retried_then_succeeds(mock):
    mock.get(TRAITS_URL, [{'status_code': 503}, {'status_code': 503},
                          {'json': traits_body({RAW})}])
    result = reporter_mod.Reporter(make_client(), RULE).sync_provider(UUID)
    assert not result.changed
    assert puts(mock) == []


def test_read_failure_after_retries_writes_nothing(mock):
    mock.get(TRAITS_URL, status_code=503)
    with pytest.raises(exceptions.PlacementError, match='503'):
        reporter_mod.Reporter(make_client(), RULE).sync_provider(UUID)
    assert puts(mock) == []
    assert len([r for r in mock.request_history
                if r.url == TRAITS_URL]) == 3  # first try + 2 retries


def test_500_on_write_is_a_clear_error_and_not_repeated(mock):
    mock.get(TRAITS_URL, json=traits_body(set()))
    mock.put(TRAITS_URL, status_code=500, json={'errors': [
        {'status': 500, 'detail': 'database is locked', 'code': None}]})
    with pytest.raises(exceptions.PlacementError,
                       match='500 to PUT /resource_providers/.*database is '
                             'locked'):
        reporter_mod.Reporter(make_client(), RULE).sync_provider(UUID)
    assert len(puts(mock)) == 1


@pytest.mark.parametrize('failure', [requests.exceptions.ConnectTimeout,
                                     requests.exceptions.ReadTimeout,
                                     requests.exceptions.ConnectionError])
def test_timeouts_and_dropped_connections_become_unavailable(mock, failure):
    mock.get(TRAITS_URL, exc=failure)
    reporter = reporter_mod.Reporter(make_client(), RULE)
    with pytest.raises(exceptions.PlacementError) as err:
        reporter.sync_provider(UUID)
    assert '\n' not in str(err.value)
    assert puts(mock) == []


def test_dropped_connection_then_recovery(mock):
    mock.get(TRAITS_URL, [{'exc': requests.exceptions.ConnectionError},
                          {'json': traits_body(set())}])
    mock.put(TRAITS_URL, json=traits_body({RAW}, 2))
    result = reporter_mod.Reporter(make_client(), RULE).sync_provider(UUID)
    assert result.added == [RAW]
    assert puts(mock)[0].json() == {'traits': [RAW],
                                    'resource_provider_generation': 1}


def test_endless_409_gives_up_after_bounded_jittered_retries(mock):
    mock.get(TRAITS_URL, json=traits_body(set()))
    mock.put(TRAITS_URL, status_code=409, json={'errors': [
        {'status': 409, 'code': 'placement.concurrent_update',
         'detail': 'generation conflict'}]})
    sleeps = []
    reporter = reporter_mod.Reporter(make_client(), RULE,
                                     conflict_retries=4,
                                     backoff=backoff.Backoff(0.1, 5.0),
                                     sleep=sleeps.append)
    with pytest.raises(exceptions.PlacementError, match='still conflicting'):
        reporter.sync_provider(UUID)
    assert len(puts(mock)) == 5
    assert len(sleeps) == 4
    for attempt, delay in enumerate(sleeps):
        assert 0 <= delay <= min(5.0, 0.1 * 2 ** attempt)


def test_lost_generation_race_reported_as_500_is_retried_like_409(mock):
    # What Placement 16's PUT .../traits answers when two API workers pass
    # the generation check at once (seen on PostgreSQL with 4 workers).
    mock.get(TRAITS_URL, [{'json': traits_body(set(), 1)},
                          {'json': traits_body({'CUSTOM_OTHER'}, 2)}])
    mock.put(TRAITS_URL, [
        {'status_code': 500, 'json': {'errors': [{
            'status': 500, 'code': 'placement.undefined_code',
            'title': 'Internal Server Error',
            'detail': 'The server has either erred or is incapable of '
                      'performing the requested operation.\n\n Another '
                      'thread concurrently updated the resource provider '
                      'data. Please retry your update  '}]}},
        {'json': traits_body({RAW, 'CUSTOM_OTHER'}, 3)}])
    result = reporter_mod.Reporter(make_client(), RULE,
                                   backoff=backoff.Backoff(0.001, 5.0),
                                   sleep=lambda _: None).sync_provider(UUID)
    assert result.conflicts == 1
    assert puts(mock)[-1].json() == {
        'traits': [RAW, 'CUSTOM_OTHER'], 'resource_provider_generation': 2}


def test_409_of_another_kind_is_not_retried(mock):
    mock.get(TRAITS_URL, json=traits_body(set()))
    mock.put(TRAITS_URL, status_code=409, json={'errors': [
        {'status': 409, 'code': 'placement.undefined_code',
         'detail': 'something else'}]})
    with pytest.raises(exceptions.PlacementError, match='409'):
        reporter_mod.Reporter(make_client(), RULE).sync_provider(UUID)
    assert len(puts(mock)) == 1


def test_non_json_error_body_is_one_line(mock):
    mock.get(TRAITS_URL, status_code=502, text='<html>\n<b>Bad '
             'gateway</b>\n</html>')
    with pytest.raises(exceptions.PlacementError) as err:
        reporter_mod.Reporter(make_client(retries=0), RULE).sync_provider(
            UUID)
    assert '\n' not in str(err.value) and '502' in str(err.value)


def test_microversion_is_discovered_once(mock):
    mock.get(TRAITS_URL, json=traits_body({RAW}))
    client = make_client()
    reporter = reporter_mod.Reporter(client, RULE)
    for _ in range(5):
        reporter.sync_provider(UUID)
    assert [r.path for r in mock.request_history].count('/') == 1
    assert all(r.headers.get('OpenStack-API-Version') == 'placement 1.39'
               for r in mock.request_history if r.path != '/')


@pytest.mark.parametrize('old', ['1.4', '1.35'])
def test_a_placement_nova_scheduler_cannot_use_is_refused(requests_mock,
                                                          old):
    """Below nova/cmd/status.py's MIN_PLACEMENT_MICROVERSION (1.36 in
    Nova 31 to 34) no boot is served: refused at discovery, in one line,
    with no other request."""
    requests_mock.get(ENDPOINT + '/', json={'versions': [
        {'id': 'v1.0', 'max_version': old, 'min_version': '1.0'}]})
    with pytest.raises(exceptions.PlacementTooOld) as raised:
        make_client().get_provider_traits(UUID)
    assert str(raised.value) == (
        'Placement maximum microversion %s is older than 1.36, which '
        'nova-scheduler needs: upgrade Placement' % old)
    assert [r.path for r in requests_mock.request_history] == ['/']


IDENTITY = 'http://127.0.0.1:5000/identity'


def password_client(requests_mock, catalog):
    """A client authenticating against Keystone, whose token has
    ``catalog`` (no Keystone here: its two answers, mocked)."""
    from keystoneauth1.identity import v3
    requests_mock.get(IDENTITY, json={'version': {
        'id': 'v3.14', 'status': 'stable', 'links': [
            {'rel': 'self', 'href': IDENTITY + '/v3/'}]}})
    requests_mock.post(IDENTITY + '/v3/auth/tokens', status_code=201,
                       headers={'X-Subject-Token': 'tok'},
                       json={'token': {'catalog': catalog,
                                       'expires_at': '2999-01-01T00:00:00Z',
                                       'methods': ['password'],
                                       'user': {'id': 'u', 'name': 'nova'}}})
    auth = v3.Password(auth_url=IDENTITY, username='nova', password='pw',
                       project_name='service', user_domain_name='Default',
                       project_domain_name='Default')
    return placement_client.PlacementClient(adapter.Adapter(
        session.Session(auth=auth), service_type='placement'))


def test_no_placement_in_the_catalogue_is_a_configuration_error(
        requests_mock):
    client = password_client(requests_mock, catalog=[
        {'type': 'compute', 'name': 'nova', 'endpoints': []}])
    with pytest.raises(exceptions.ConfigError, match='EndpointNotFound|'
                       'endpoint'):
        client.get_provider_traits(UUID)
    # Only the token was asked for: Placement never was.
    assert [r.url for r in requests_mock.request_history] == [
        IDENTITY + '/v3/auth/tokens']


def test_placement_refusing_the_token_is_a_configuration_error(mock):
    mock.get(TRAITS_URL, status_code=401, json={'errors': [
        {'status': 401, 'detail': 'unauthorized'}]})
    with pytest.raises(exceptions.ConfigError, match='401'):
        reporter_mod.Reporter(make_client(), RULE).sync_provider(UUID)
    assert puts(mock) == []


def test_a_trait_placement_lacked_is_tried_again_next_cycle(mock):
    future = 'COMPUTE_IMAGE_TYPE_FROM_THE_FUTURE'
    mock.get(TRAITS_URL, json=traits_body(set()))
    mock.put(TRAITS_URL, [
        {'status_code': 400, 'json': {'errors': [
            {'status': 400, 'detail': 'No such trait(s): %s' % future}]}},
        {'json': traits_body({RAW}, 2)},          # cycle 1, without it
        {'json': traits_body({RAW, future}, 3)},  # cycle 2: upgraded
    ])
    reporter = reporter_mod.Reporter(make_client(),
                                     helpers.image_type_rule({RAW, future}))
    first = reporter.sync([UUID])
    assert first.missing_traits == {future}
    second = reporter.sync([UUID])
    assert second.missing_traits == frozenset()
    assert puts(mock)[-1].json()['traits'] == sorted({RAW, future})


def test_a_stop_in_the_409_back_off_forgets_what_was_never_written(
        mock, tmp_path):
    """The custom trait is recorded before the write; every write meets a
    409 and a stop comes in the back-off: the record must not keep a
    trait this reporter never set on the provider (a later remove would
    take it off though another agent set it)."""
    from image_type_common import control
    from virt_capabilities import ownership_state
    mock.get(TRAITS_URL, json=traits_body(set()))
    mock.put(TRAITS_URL, status_code=409, json={'errors': [
        {'status': 409, 'code': 'placement.concurrent_update',
         'detail': 'generation conflict'}]})
    state = ownership_state.OwnershipState(str(tmp_path / 'state.json'))

    def stop_now(delay):
        raise control.Stopping()
    reporter = reporter_mod.Reporter(
        make_client(), helpers.image_type_rule(custom={'CUSTOM_TROVE'}),
        state, conflict_retries=4, sleep=stop_now)
    with pytest.raises(control.Stopping):
        reporter.sync_provider(UUID)
    assert len(puts(mock)) == 1
    assert 'CUSTOM_TROVE' not in ownership_state.OwnershipState(
        str(tmp_path / 'state.json')).owned(UUID)
