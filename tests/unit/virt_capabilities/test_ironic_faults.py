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

"""Ironic's answers a real noauth Ironic cannot be made to give
(requests-mock): refused credentials, a node locked for longer than the
retries, an Ironic too old for node traits, a server error. Each ends in
one error naming Ironic, and what was added before it is recorded. The
client is built as the reporter builds it, from a nova.conf's
``[ironic]``."""

import pytest

from image_type_common import exceptions
from virt_capabilities import conf as vc_conf
from virt_capabilities import ironic_node_traits as int_mod

ENDPOINT = 'http://127.0.0.1:6385'
NODE = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'
NODE_URL = '%s/v1/nodes/%s' % (ENDPOINT, NODE)


def versions(newest='1.99'):
    return {'versions': [{'id': 'v1', 'status': 'CURRENT',
                          'min_version': '1.1', 'version': newest,
                          'links': [{'href': ENDPOINT + '/v1/',
                                     'rel': 'self'}]}]}


def serve_versions(requests_mock, newest='1.99'):
    document = versions(newest)
    for path in ('', '/'):
        requests_mock.get(ENDPOINT + path, json=document)
    for path in ('/v1', '/v1/'):
        requests_mock.get(ENDPOINT + path,
                          json={'version': document['versions'][0]})


@pytest.fixture
def mock(requests_mock):
    serve_versions(requests_mock)
    return requests_mock


@pytest.fixture
def client(tmp_path):
    def make(retries=2):
        path = tmp_path / 'nova.conf'
        path.write_text(
            '[DEFAULT]\ncompute_driver = ironic.IronicDriver\n'
            '[ironic]\nauth_type = none\nendpoint_override = %s\n'
            'status_code_retries = %d\nstatus_code_retry_delay = 0.01\n'
            % (ENDPOINT, retries))
        return int_mod.store_for(vc_conf.load([str(path)]))
    return make


def fault(text, status_code):
    """Ironic's error answer, as it sends it (JSON, the fault inside)."""
    return {'status_code': status_code,
            'headers': {'Content-Type': 'application/json'},
            'json': {'error_message': '{"faultcode": "Client", '
                                      '"faultstring": "%s", "debuginfo": '
                                      'null}' % text}}


def test_every_trait_request_pins_the_traits_microversion(mock, client):
    mock.put(NODE_URL + '/traits/CUSTOM_A', status_code=204)
    client().add_trait(NODE, 'CUSTOM_A')
    sent = mock.request_history[-1]
    assert sent.headers['X-OpenStack-Ironic-API-Version'] == '1.37'


def test_refused_credentials_name_the_policy(mock, client):
    mock.put(NODE_URL + '/traits/CUSTOM_A',
             **fault('Access was denied to the following resource', 403))
    with pytest.raises(int_mod.IronicRefused) as caught:
        client().add_trait(NODE, 'CUSTOM_A')
    assert caught.value.exit_code == 2
    assert str(caught.value).startswith(
        'Ironic at %s/v1/ refused the [ironic] credentials (403) on PUT '
        'nodes/%s/traits/CUSTOM_A' % (ENDPOINT, NODE))
    assert 'baremetal:node:traits:set' in str(caught.value)


def test_a_locked_node_is_retried_then_given_up(mock, client):
    locked = fault('Node %s is locked by host conductor-1' % NODE, 409)
    mock.put(NODE_URL + '/traits/CUSTOM_A', [locked, locked,
                                             {'status_code': 204}])
    client(retries=2).add_trait(NODE, 'CUSTOM_A')
    mock.put(NODE_URL + '/traits/CUSTOM_B', [locked] * 4)
    with pytest.raises(int_mod.IronicError) as caught:
        client(retries=2).add_trait(NODE, 'CUSTOM_B')
    assert 'answered 409' in str(caught.value)
    assert 'is locked by host conductor-1' in str(caught.value)
    assert len([r for r in mock.request_history
                if r.url.endswith('CUSTOM_B')]) == 3


def test_an_ironic_without_node_traits_is_named(requests_mock, client):
    serve_versions(requests_mock, '1.36')
    with pytest.raises(int_mod.IronicError) as caught:
        client().get_node(NODE)
    assert str(caught.value) == (
        'Ironic at %s offers Bare Metal API microversions up to 1.36: node '
        'traits need 1.37' % ENDPOINT)
    assert not isinstance(caught.value, exceptions.ConfigError)


def test_a_server_error_names_ironic_and_stops_the_write(mock, client):
    mock.put(NODE_URL + '/traits/CUSTOM_A', status_code=204)
    mock.put(NODE_URL + '/traits/CUSTOM_B',
             **fault('database is locked', 500))
    mock.delete(NODE_URL + '/traits/CUSTOM_OLD', status_code=204)
    store = client()
    with pytest.raises(int_mod.IronicUnavailable) as caught:
        store.write(NODE, {'CUSTOM_A', 'CUSTOM_B'}, frozenset({'CUSTOM_OLD'}))
    assert str(caught.value) == (
        'Ironic at %s/v1/ answered 500 to PUT nodes/%s/traits/CUSTOM_B: '
        'database is locked' % (ENDPOINT, NODE))
    # Nothing after the failure was sent.
    assert not [r for r in mock.request_history if r.method == 'DELETE']


def test_write_changes_one_trait_a_request_and_only_the_difference(
        mock, client):
    mock.put(NODE_URL + '/traits/CUSTOM_NEW', status_code=204)
    mock.delete(NODE_URL + '/traits/CUSTOM_OLD', status_code=204)
    store = client()
    store.write(NODE, {'CUSTOM_NEW', 'CUSTOM_KEPT'},
                frozenset({'CUSTOM_OLD', 'CUSTOM_KEPT'}))
    assert [(r.method, r.path) for r in mock.request_history
            if r.method != 'GET'] == [
        ('PUT', '/v1/nodes/%s/traits/custom_new' % NODE),
        ('DELETE', '/v1/nodes/%s/traits/custom_old' % NODE)]
