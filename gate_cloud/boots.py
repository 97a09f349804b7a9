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

"""Boots through the real API: images into Glance, servers to the end."""

import time
import urllib.request

from gate_cloud import layout
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import glance
from gate_cloud.services import nova

#: How long a boot may take from the API call to ACTIVE or ERROR.
BOOT_DEADLINE = 180.0


def upload_image(client, name, disk_format, path, properties=None):
    body = {'name': name, 'disk_format': disk_format,
            'container_format': 'bare', 'visibility': 'public'}
    body.update(properties or {})
    image = client.post(glance.URL + '/v2/images', body)
    with open(path, 'rb') as f:
        data = f.read()
    # Every URL here is the cloud's own http://127.0.0.1 endpoint.
    req = urllib.request.Request(  # noqa: S310
        glance.URL + '/v2/images/%s/file' % image['id'],
        data=data, method='PUT', headers={
            'Content-Type': 'application/octet-stream',
            'X-Auth-Token': client.valid_token()})
    with urllib.request.urlopen(req, timeout=120):  # noqa: S310
        pass
    return image['id']


def server_url(server_id=''):
    return nova.API_URL + '/servers' + (
        '/' + server_id if server_id else '')


def create(client, name, image_id, flavor_id=layout.FLAVOR['id']):
    return create_server(client, name, image_id, flavor_id)[0]


def create_server(client, name, image_id, flavor_id=layout.FLAVOR['id'],
                  availability_zone=None):
    """(server id, the request id nova-api gave the boot): the global
    request id nova-scheduler sends Placement while it schedules it."""
    body = {'name': name, 'imageRef': image_id, 'flavorRef': flavor_id,
            'networks': 'none'}
    if availability_zone:
        body['availability_zone'] = availability_zone
    _, headers, out = client.call_full('POST', server_url(),
                                       {'server': body},
                                       headers=rest.COMPUTE_HEADERS)
    return out['server']['id'], headers.get('x-openstack-request-id')


def create_flavor(client, flavor_id, name, ram, vcpus, disk,
                  extra_specs=None):
    """A public flavor, with its extra specs."""
    client.post(nova.API_URL + '/flavors', {'flavor': {
        'name': name, 'id': flavor_id, 'ram': ram, 'vcpus': vcpus,
        'disk': disk}}, headers=rest.COMPUTE_HEADERS)
    if extra_specs:
        client.post(nova.API_URL + '/flavors/%s/os-extra_specs' % flavor_id,
                    {'extra_specs': extra_specs},
                    headers=rest.COMPUTE_HEADERS)
    return flavor_id


def delete_flavor(client, flavor_id):
    try:
        client.delete(nova.API_URL + '/flavors/%s' % flavor_id,
                      headers=rest.COMPUTE_HEADERS)
    except rest.HTTPError as exc:
        if exc.code != 404:
            raise


def delete_image(client, image_id):
    try:
        client.delete(glance.URL + '/v2/images/%s' % image_id)
    except rest.HTTPError as exc:
        if exc.code != 404:
            raise


def wait(client, server_id, deadline=BOOT_DEADLINE):
    """Poll until ACTIVE or ERROR; returns the server dict."""
    end = time.monotonic() + deadline
    delay = 0.25
    while True:
        server = client.get(server_url(server_id),
                            headers=rest.COMPUTE_HEADERS)['server']
        if server['status'] in ('ACTIVE', 'ERROR'):
            return server
        if time.monotonic() > end:
            raise GateError('server %s still %s after %ds' % (
                server_id, server['status'], deadline))
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


def boot(client, name, image_id, deadline=BOOT_DEADLINE):
    """Boot one server; returns (seconds API-to-final, server dict)."""
    start = time.monotonic()
    sid = create(client, name, image_id)
    server = wait(client, sid, deadline)
    return time.monotonic() - start, server


def host_of(server):
    return server.get('OS-EXT-SRV-ATTR:host')


def host_of_node(server):
    """The compute node a server is on (its resource provider's name; an
    ironic node's uuid), or None."""
    return server.get('OS-EXT-SRV-ATTR:hypervisor_hostname')


def delete(client, server_id, deadline=120.0):
    try:
        client.delete(server_url(server_id), headers=rest.COMPUTE_HEADERS)
    except rest.HTTPError as exc:
        if exc.code == 404:
            return
        raise
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            client.get(server_url(server_id), headers=rest.COMPUTE_HEADERS)
        except rest.HTTPError as exc:
            if exc.code == 404:
                return
            raise
        time.sleep(0.5)
    raise GateError('server %s not deleted after %ds' % (server_id,
                                                        deadline))
