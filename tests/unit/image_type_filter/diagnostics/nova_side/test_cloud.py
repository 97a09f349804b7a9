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

"""Glance and Nova through openstacksdk, as ``candidates`` reads them:
Glance's answers (shaped as Glance's v2 API documents them) served by
requests-mock. A real Nova answers in tests/nova."""

from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from openstack import connection as sdk_connection
import pytest

from image_type_common import exceptions
from image_type_filter.diagnostics.nova_side import cloud

GLANCE = 'https://glance.example'
NOVA = 'https://nova.example'
IMAGE_ID = '6d5e4f3a-2b1c-4d0e-9f8a-7b6c5d4e3f2a'
#: Glance's image schema, cut to what Nova's split reads: base attributes,
#: and an ``is_base: false`` one (an image property to Nova).
SCHEMA = {'name': 'image', 'properties': {
    'id': {'type': 'string'}, 'name': {'type': ['null', 'string']},
    'disk_format': {'type': ['null', 'string']},
    'status': {'type': 'string'},
    'locations': {'type': 'array'},
    'hw_vif_model': {'type': 'string', 'is_base': False}}}
IMAGE = {'id': IMAGE_ID, 'name': 'cirros', 'disk_format': 'qcow2',
         'status': 'active', 'tags': [], 'self': '/v2/images/' + IMAGE_ID,
         'schema': '/v2/schemas/image',
         # Properties as Glance keeps them: strings, whatever they say.
         'hw_cpu_cores': 'two', 'hw_boot_menu': 'maybe',
         'hw_vif_model': 'virtio'}


@pytest.fixture
def glance(requests_mock):
    requests_mock.get(GLANCE, json={'versions': [{
        'id': 'v2.16', 'status': 'CURRENT',
        'links': [{'rel': 'self', 'href': GLANCE + '/v2/'}]}]})
    requests_mock.get(GLANCE + '/v2/schemas/image', json=SCHEMA)
    return requests_mock


def a_cloud():
    session = ks_session.Session(
        auth=token_endpoint.Token(GLANCE, 'admin'), timeout=5)
    return cloud.Cloud(sdk_connection.Connection(
        session=session, image_endpoint_override=GLANCE,
        compute_endpoint_override=NOVA))


def test_an_image_by_name_is_as_glance_has_it(glance):
    """openstacksdk finds it; its properties reach Nova unconverted (a
    value Nova refuses is refused by Nova), with Glance's schema, which
    Nova's own split reads (tests/nova)."""
    glance.get(GLANCE + '/v2/images/cirros', status_code=404)
    glance.get(GLANCE + '/v2/images?name=cirros', json={'images': [IMAGE]})
    glance.get(GLANCE + '/v2/images/' + IMAGE_ID, json=IMAGE)
    image = a_cloud().image('cirros')
    assert image == IMAGE
    assert image.schema == SCHEMA


def test_no_such_image_and_two_of_a_name_are_one_line_exit_2(glance):
    glance.get(GLANCE + '/v2/images', json={'images': []})  # hidden ones
    glance.get(GLANCE + '/v2/images/nothing', status_code=404)
    glance.get(GLANCE + '/v2/images?name=nothing', json={'images': []})
    glance.get(GLANCE + '/v2/images/twice', status_code=404)
    glance.get(GLANCE + '/v2/images?name=twice', json={'images': [
        dict(IMAGE, name='twice'), dict(IMAGE, name='twice', id='x')]})
    with pytest.raises(cloud.NotFound) as caught:
        a_cloud().image('nothing')
    assert str(caught.value) == "no image 'nothing' in Glance"
    assert caught.value.exit_code == 2
    with pytest.raises(exceptions.ConfigError) as caught:
        a_cloud().image('twice')
    assert 'more than one image is named \'twice\': give its id' == str(
        caught.value)


def test_glance_refusing_the_credentials_names_glance_and_the_role(glance):
    glance.get(GLANCE + '/v2/images', status_code=403)
    glance.get(GLANCE + '/v2/images/' + IMAGE_ID, status_code=403)
    with pytest.raises(exceptions.ConfigError) as caught:
        a_cloud().image(IMAGE_ID)
    assert str(caught.value).startswith(
        'Glance refused the credentials (403) on GET /v2/images')
    assert 'admin role' in str(caught.value)


def test_glance_failing_is_exit_1_naming_glance_and_its_url(glance):
    glance.get(GLANCE + '/v2/images/' + IMAGE_ID, status_code=500)
    with pytest.raises(cloud.CloudError) as caught:
        a_cloud().image(IMAGE_ID)
    message = str(caught.value)
    assert message.startswith('Glance at %s' % GLANCE)
    assert '500' in message and '\n' not in message
    assert caught.value.exit_code == 1


def test_an_endpoint_that_is_not_novas_is_one_line_exit_1(requests_mock):
    """A catalogue's compute endpoint that answers as another service."""
    requests_mock.get(NOVA, json={'versions': [{
        'id': 'v1.0', 'status': 'CURRENT', 'min_version': '1.0',
        'max_version': '1.39',
        'links': [{'rel': 'self', 'href': NOVA + '/'}]}]})
    with pytest.raises(cloud.CloudError) as caught:
        a_cloud().server('vm-1')
    assert 'does not answer as Nova\'s API' in str(caught.value)
    assert caught.value.exit_code == 1
