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

"""What the cloud holds once its services are up, and its description.

Two flavors, small image files of each format, and ``.cloud/cloud.json``
(the contract ``tempest_run.py`` and the test phases read) with a
``clouds.yaml`` beside it.
"""

import json
import struct

from gate_cloud import context
from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import keystone
from gate_cloud.services import nova
from gate_cloud.services import nova_compute
from gate_cloud.services import nova_scheduler

CLOUD_JSON = 'cloud.json'
#: Made with qemu-img; raw and iso by hand (below).
QEMU_IMG_FORMATS = ('qcow2', 'vmdk', 'vdi', 'vhdx')


def make(cloud):
    """Flavors and image files in the running ``cloud``; cloud.json."""
    flavors(cloud.admin)
    return describe(cloud, computes_as_placement_says(cloud), image_files())


def refresh(cloud):
    """cloud.json again, for the cloud as it runs now (after an upgrade:
    the series, the clients' virtualenv, the image types reported)."""
    return describe(cloud, computes_as_placement_says(cloud),
                    load()['image_files'])


def computes_as_placement_says(cloud):
    """nova_compute.records(), each with the image types its provider
    carries in Placement."""
    computes = nova_compute.records()
    traits = rest.all_traits(cloud.admin)
    for c in computes:
        c['image_types'] = sorted(
            t[len('COMPUTE_IMAGE_TYPE_'):].lower()
            for t in traits.get(c['provider'], ())
            if t.startswith('COMPUTE_IMAGE_TYPE_'))
    return computes


def flavors(admin):
    for f in (layout.FLAVOR, layout.FLAVOR_ALT):
        admin.post(nova.API_URL + '/flavors', {'flavor': {
            'name': f['name'], 'id': f['id'], 'ram': f['ram'],
            'vcpus': f['vcpus'], 'disk': f['disk']}})


def image_files():
    images = layout.path('images')
    images.mkdir(exist_ok=True)
    files = {}
    for fmt in QEMU_IMG_FORMATS:
        path = images / ('empty.' + fmt)
        processes.run('qemu-img create', ['qemu-img', 'create', '-q', '-f',
                                          fmt, path, '64M'])
        files[fmt] = str(path)
    raw = images / 'empty.raw'
    with open(raw, 'wb') as f:
        f.truncate(1024 * 1024)
    files['raw'] = str(raw)
    iso = images / 'empty.iso'
    iso.write_bytes(empty_iso())
    files['iso'] = str(iso)
    return files


def empty_iso(blocks=32, block_size=2048):
    """An ISO 9660 image with nothing on it: Glance inspects the upload
    and refuses an ``iso`` without a primary volume descriptor."""
    data = bytearray(blocks * block_size)
    pvd = 16 * block_size  # after the 16 system-area sectors
    data[pvd:pvd + 7] = b'\x01CD001\x01'
    data[pvd + 80:pvd + 88] = struct.pack('<L', blocks) + struct.pack(
        '>L', blocks)
    data[pvd + 128:pvd + 132] = struct.pack('<H', block_size) + struct.pack(
        '>H', block_size)
    end = pvd + block_size  # the set terminator
    data[end:end + 7] = b'\xffCD001\x01'
    return bytes(data)


def endpoints(services):
    """{service type: URL} of every service's CATALOG."""
    return {stype: url for svc in services
            for stype, (_, url) in getattr(svc, 'CATALOG', {}).items()}


def describe(cloud, computes, image_files):
    """cloud.json (private: the admin password is in it) and clouds.yaml."""
    description = {
        'auth_url': keystone.AUTH_URL,
        'region': layout.REGION,
        'admin': {'username': 'admin',
                  'password': cloud.creds['admin_password'],
                  'project_name': 'admin', 'user_domain_name': 'Default',
                  'project_domain_name': 'Default'},
        'endpoints': endpoints(cloud.services),
        'flavor': {'id': layout.FLAVOR['id'], 'name': layout.FLAVOR['name']},
        'flavor_alt': {'id': layout.FLAVOR_ALT['id'],
                       'name': layout.FLAVOR_ALT['name']},
        'image_files': image_files,
        'computes': [{k: c[k] for k in (
            'host', 'driver', 'provider', 'image_types', 'custom_traits',
            'nova_conf', 'reporter_log', 'service_log')} for c in computes],
        'reserved_trait': layout.RESERVED_TRAIT,
        'image_metadata_family': layout.IMAGE_METADATA_FAMILY,
        'scheduler': {'nova_conf': str(nova_scheduler.conf_path()),
                      'log': str(nova_scheduler.log_file()),
                      'workers': nova_scheduler.WORKERS},
        # The clients' (tempest's) virtualenv, and what each service runs.
        'venv': str(cloud.venv(context.CLIENTS)),
        'series': dict(cloud.series),
        'logs': str(layout.path('logs')),
    }
    inifile.write(layout.path(CLOUD_JSON), json.dumps(description, indent=2))
    inifile.write(layout.path('clouds.yaml'), clouds_yaml(description))
    return description


def clouds_yaml(description):
    a = description['admin']
    return '\n'.join([
        'clouds:',
        '  %s:' % layout.CLOUD_NAME,
        '    region_name: %s' % description['region'],
        '    identity_api_version: 3',
        '    auth:',
        '      auth_url: %s' % description['auth_url'],
        '      username: %s' % a['username'],
        '      password: %s' % json.dumps(a['password']),
        '      project_name: %s' % a['project_name'],
        '      user_domain_name: %s' % a['user_domain_name'],
        '      project_domain_name: %s' % a['project_domain_name'],
        ''])


def load():
    """cloud.json of the cloud that is up."""
    try:
        return json.loads(layout.path(CLOUD_JSON).read_text())
    except FileNotFoundError:
        raise GateError('no cloud is up (%s missing)'
                        % layout.path(CLOUD_JSON)) from None
