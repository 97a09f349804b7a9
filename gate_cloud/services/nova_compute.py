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

"""nova-compute: a real libvirt/QEMU node and fake ones beside it.

Each compute is its own process (``nova-compute-<host>``) with its own
nova.conf, which the reporter beside it reads too (``reporters.py``).
"""

import json
import math
import os
import socket

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import ironic
from gate_cloud.services import libvirt
from gate_cloud.services import nova
from gate_cloud.services import nova_api

NAME = 'nova-compute'
PORTS = {}
DEBIAN = ()
PYPI = nova.PYPI
NEEDS = ('rabbitmq', 'keystone', 'placement', 'libvirt', 'nova-api',
         'nova-conductor')
USERS = nova.USERS
LIBVIRT = 'libvirt.LibvirtDriver'
#: Nova's single-node fake driver: its node keeps its uuid in state_path's
#: compute_id, as a real driver's does, so it survives a restart (the
#: upgrade restarts every node); FakeDriver's node gets a new uuid in every
#: process, and nova-compute refuses to start on it again.
FAKE = 'fake.FakeDriverWithoutFakeNodes'
#: The compute nodes. The libvirt node's provider is named after the host
#: name libvirt reports, learnt once it registers (``PROVIDERS``).
COMPUTES = (
    {'host': 'libvirt-qemu', 'driver': LIBVIRT},
    {'host': 'fake-raw', 'driver': FAKE},
    {'host': 'fake-trove', 'driver': FAKE,
     'custom_traits': [layout.RESERVED_TRAIT]},
    {'host': 'fake-noraw', 'driver': FAKE, 'exclude': ['raw']},
)
#: The privsep contexts' config sections (their cfg_section).
PRIVSEP_CONTEXTS = ('nova_sys_admin', 'privsep_osbrick',
                    'vif_plug_ovs_privileged')
#: {host: resource provider name}, written once every compute registered.
PROVIDERS = 'providers.json'
#: How many gate.tiny servers the libvirt node must hold at once. It is
#: the only node that boots qcow2, iso and the kernel formats, and tempest
#: runs four test classes at once, each booting up to a wave of servers:
#: with Nova's initial ratio (4.0) on two cores it held 8, and a ninth boot
#: (an ISO one, once) got no allocation candidates from Placement.
LIBVIRT_GUESTS = 32
#: nova-compute (on libvirt) ignores SIGTERM for minutes: short grace.
STOP_GRACE = 5.0


def process_name(host):
    return 'nova-compute-' + host


def series_key(cloud, host):
    """The series map's key for one compute: its own entry if it has one
    (a compute moved alone), else the service's."""
    own = process_name(host)
    return own if own in cloud.series else NAME


def records():
    """Each compute with its files and provider name."""
    try:
        known = json.loads(layout.path('nova', PROVIDERS).read_text())
    except FileNotFoundError:
        known = {}
    out = []
    for spec in COMPUTES:
        rec = dict(spec)
        host = spec['host']
        rec['nova_conf'] = str(nova.conf_path('compute-' + host))
        rec['provider'] = known.get(host) or (
            socket.gethostname() if spec['driver'] == LIBVIRT else host)
        rec['reporter_log'] = str(layout.path('logs', 'reporter-%s.log'
                                              % host))
        rec['log'] = str(nova.log(process_name(host)))
        # nova.conf's [DEFAULT] log_file: nova-compute's oslo.log file, and
        # the reporter's too, for it follows nova.conf's log options.
        rec['service_log'] = str(layout.path('logs', 'nova-compute-%s-app.log'
                                             % host))
        rec.setdefault('custom_traits', [])
        out.append(rec)
    return out


def conf(creds, compute, venv):
    """A compute node's nova.conf (``compute`` one of ``records()``); the
    reporter beside it reads it too. ``venv``: its series' virtualenv."""
    name = compute['host']
    out = inifile.merge(nova.common(creds, 'compute-' + name), {
        'DEFAULT': {'host': name, 'compute_driver': compute['driver']},
        'compute': {},
        'virt_capabilities': {
            # The production setting: nova-compute keeps the image-type
            # traits, the reporter its custom ones.
            'image_type_traits_owner': 'nova-compute',
        },
    })
    if compute.get('exclude'):
        out['compute']['image_type_exclude_list'] = ','.join(
            compute['exclude'])
    if compute.get('custom_traits'):
        out['virt_capabilities']['custom_traits'] = ','.join(
            compute['custom_traits'])
    if compute['driver'] == LIBVIRT:
        helper = '%s/bin/privsep-helper --config-file %s' % (
            venv, compute['nova_conf'])
        out['libvirt'] = {
            'virt_type': compute.get('virt_type', 'qemu'),
            'cpu_mode': 'none',
            'images_type': 'qcow2',
            'connection_uri': libvirt.connection_uri(),
        }
        out['DEFAULT']['instances_path'] = str(
            nova.state_path('compute-' + name) / 'instances')
        # The guests boot empty disks: no OS answers ACPI, so a clean
        # shutdown (a rebuild's first step) would wait Nova's default 60 s
        # for nothing before powering off.
        out['DEFAULT']['shutdown_timeout'] = '0'
        out['DEFAULT']['cpu_allocation_ratio'] = str(
            libvirt_cpu_allocation_ratio())
        # No sudo here: each privsep context nova-compute loads (Nova's,
        # os-brick's, os-vif's OVS plugin) runs the helper directly.
        for section in PRIVSEP_CONTEXTS:
            out[section] = {'helper_command': helper}
    return out


def libvirt_cpu_allocation_ratio(cores=None):
    """The libvirt node's VCPU allocation ratio: LIBVIRT_GUESTS one-VCPU
    servers on this machine's cores, and never below Nova's initial 4.0
    (the guests boot empty disks and idle)."""
    cores = cores or os.cpu_count() or 1
    return max(4.0, float(math.ceil(LIBVIRT_GUESTS / cores)))


def _selected(hosts):
    return [c for c in records() if hosts is None or c['host'] in hosts]


def configure(cloud, hosts=None):
    for c in _selected(hosts):
        venv = cloud.venv(series_key(cloud, c['host']))
        inifile.write_conf(c['nova_conf'], conf(cloud.creds, c, venv))
        nova.make_state('compute-' + c['host'])
        if c['driver'] == LIBVIRT:
            (nova.state_path('compute-' + c['host']) / 'instances').mkdir(
                exist_ok=True)


def start(cloud, hosts=None):
    for c in _selected(hosts):
        nova.start_service(cloud, series_key(cloud, c['host']),
                           process_name(c['host']), 'nova-compute',
                           c['nova_conf'])


def wait(cloud, hosts=None):
    """Until every compute has a provider in Placement and each started
    here reports in as up after its start. The fake driver names its node
    after [DEFAULT] host; libvirt after the host name it reports, so the
    libvirt node's provider is the one left over (the ironic
    nova-compute's, named by node uuid, apart)."""
    computes = records()
    fakes = {c['host'] for c in computes if c['driver'] != LIBVIRT}
    found = {}

    def probe():
        for c in _selected(hosts):
            proc = processes.started(process_name(c['host']))
            if proc is not None and proc.poll() is not None:
                raise GateError('nova-compute %s exited with %s; see %s'
                                % (c['host'], proc.returncode, c['log']))
        try:
            have = {p['name'] for p in rest.providers(cloud.admin)}
        except GateError:
            return False
        others = have - fakes - set(ironic.NODES.values())
        if not fakes <= have or len(others) != len(computes) - len(fakes):
            return False
        for c in computes:
            found[c['host']] = (c['host'] if c['driver'] != LIBVIRT
                                else others.pop())
        return True
    processes.wait_for('nova-compute resource providers in Placement',
                       probe, log=layout.path('logs'))
    inifile.write(layout.path('nova', PROVIDERS), json.dumps(found),
                  mode=0o644)
    if hosts is not None:
        # Restarted ones: their providers were there before; the proof
        # they run is their service record, updated since they started.
        for c in _selected(hosts):
            nova.wait_reported(cloud, process_name(c['host']), NAME,
                               host=c['host'])


def populate(cloud):
    """Map the new hosts to cell1: the scheduler sends nothing to a host
    before."""
    nova.manage(cloud, nova_api.NAME, nova_api.conf_path(), 'cell_v2',
                'discover_hosts')


def stop(cloud, hosts=None):
    processes.stop_many([process_name(c['host']) for c in _selected(hosts)],
                        grace=STOP_GRACE)
