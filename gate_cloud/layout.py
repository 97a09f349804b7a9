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

"""Where the cloud keeps its state, and the facts several services share.

Each service's own ports, packages and files are in its module under
``gate_cloud/services/``; what is here is what more than one of them (or
the tests run against the cloud) needs.
"""

import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parent.parent
STATE = REPO / '.cloud'
HOST = '127.0.0.1'
REGION = 'RegionOne'
CLOUD_NAME = 'image-type-gate'

#: The reserved trait: the reporters set it on one compute
#: (``services/nova_compute.py``), nova-scheduler's ``[image_isolation]``
#: reserves it (``services/nova_scheduler.py``).
RESERVED_TRAIT = 'CUSTOM_TROVE'
#: The image-metadata family the home-made cloud's scheduler enables: a
#: family whose values become required traits, so that a value no host
#: carries is refused with a fault naming it. (The devstack job enables
#: ``architecture``, whose refusal names the HW_ARCH_* trait too.)
IMAGE_METADATA_FAMILY = 'storage_bus'
#: Readiness probes: per request, and for a service to come up at all.
PROBE_TIMEOUT = 5.0
START_DEADLINE = 240.0

FLAVOR = {'id': '42', 'name': 'gate.tiny', 'ram': 128, 'vcpus': 1, 'disk': 1}
#: A second one: tempest's flavor filters need two (flavor_ref_alt).
FLAVOR_ALT = {'id': '43', 'name': 'gate.tiny.alt', 'ram': 192, 'vcpus': 1,
              'disk': 1}


def path(*parts):
    return STATE.joinpath(*parts)


def url(port, suffix=''):
    return 'http://%s:%d%s' % (HOST, port, suffix)


def env_for_services(venv=None):
    """The environment a service starts with: ours, minus proxies and
    OS_* variables, with ``venv``'s programs (if any) first on PATH."""
    env = {k: v for k, v in os.environ.items()
           if not k.lower().endswith('_proxy') and not k.startswith('OS_')}
    if venv is not None:
        env['PATH'] = '%s:%s' % (pathlib.Path(venv) / 'bin',
                                 env.get('PATH', '/usr/bin:/bin'))
    env['PYTHONPATH'] = str(REPO)
    env['TMPDIR'] = str(STATE / 'tmp')
    return env
