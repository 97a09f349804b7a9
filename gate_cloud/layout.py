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

"""Where everything lives and which loopback ports it takes (each once)."""

import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parent.parent
STATE = REPO / '.cloud'
VENV = REPO / '.venv-cloud'
HOST = '127.0.0.1'
REGION = 'RegionOne'
CLOUD_NAME = 'image-type-gate'

#: Every TCP port the cloud listens on, by the part that owns it. A port in
#: use refuses the start-up naming it.
PORTS = {
    'mariadb': 3306,
    'epmd': 4369,
    'rabbitmq': 5672,
    'rabbitmq-dist': 25672,
    'keystone': 5000,
    'glance': 9292,
    'placement': 8778,
    'nova-api': 8774,
    'network-standin': 9696,
}

#: Debian packages the cloud needs (--no-install-recommends), by the
#: program the cloud runs from them.
DEBIAN_PACKAGES = (
    'mariadb-server', 'rabbitmq-server',
    'libvirt-daemon', 'libvirt-daemon-system', 'libvirt-daemon-driver-qemu',
    'libvirt-clients', 'libvirt-dev', 'qemu-system-x86', 'qemu-utils',
    'pkg-config',
)

#: What the cloud's virtualenv holds (this project and contrib/tempest are
#: added editable).
PYPI_PACKAGES = (
    'nova==34.0.0', 'keystone', 'openstack-placement', 'glance', 'gunicorn',
    'PyMySQL', 'python-openstackclient', 'osc-placement', 'tempest',
    'libvirt-python',
)

#: How many nova-scheduler workers (the issue asks for two).
SCHEDULER_WORKERS = 2
#: The reporters' --interval, seconds.
REPORTER_INTERVAL = 10
#: The reserved trait and the compute that carries it.
RESERVED_TRAIT = 'CUSTOM_TROVE'
#: The image-metadata family the scheduler enables. A family whose values
#: become required traits, so that a value no host carries is refused with
#: a fault naming it; hw_architecture only forbids the other HW_ARCH_*
#: traits (hosts with none are left to Nova's ImagePropertiesFilter, whose
#: refusal names nothing).
IMAGE_METADATA_FAMILY = 'storage_bus'
#: Readiness probes: per request, and for a service to come up at all.
PROBE_TIMEOUT = 5.0
START_DEADLINE = 240.0

FLAVOR = {'id': '42', 'name': 'gate.tiny', 'ram': 128, 'vcpus': 1, 'disk': 1}
#: A second one: tempest's flavor filters need two (flavor_ref_alt).
FLAVOR_ALT = {'id': '43', 'name': 'gate.tiny.alt', 'ram': 192, 'vcpus': 1,
              'disk': 1}


def venv_bin(name):
    return str(VENV / 'bin' / name)


def path(*parts):
    return STATE.joinpath(*parts)


def url(service, suffix=''):
    return 'http://%s:%d%s' % (HOST, PORTS[service], suffix)


ENDPOINTS = {
    'identity': url('keystone', '/v3'),
    'compute': url('nova-api', '/v2.1'),
    'image': url('glance'),
    'placement': url('placement'),
    'network': url('network-standin'),
}
AUTH_URL = ENDPOINTS['identity']


def env_for_services():
    """The environment every service starts with: ours, minus proxies."""
    env = {k: v for k, v in os.environ.items()
           if not k.lower().endswith('_proxy') and not k.startswith('OS_')}
    env['PATH'] = '%s:%s' % (VENV / 'bin', env.get('PATH', '/usr/bin:/bin'))
    env['PYTHONPATH'] = str(REPO)
    env['TMPDIR'] = str(STATE / 'tmp')
    return env
