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

"""A real Ironic on 127.0.0.1 for tests: API and conductor in one process.

Ironic from the package index (the ``ironic`` extra), run as its own
single-process command (``ironic``: the conductor with the API embedded),
with SQLite, no authentication (``auth_strategy = noauth``), no message
bus (``rpc_transport = none``) and only the ``fake-hardware`` hardware
type, which needs no machine: enrolled nodes go through Ironic's real
state machine (manage, provide, deploy) and its real trait API. Started in
a directory of its own, stopped by its pid (and whatever it forked, by
pidfd); it gets SIGTERM if the test process dies.

What nova.conf's ``[ironic]`` needs to reach it is ``nova_conf_section``.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

import requests

from placement_runner import lifetime

#: Every Bare Metal API request the tests make themselves is at this
#: microversion (node traits need 1.37, nothing here more).
MICROVERSION = '1.37'
HEADERS = {'X-OpenStack-Ironic-API-Version': MICROVERSION}
SAFETY_TIMEOUT = 120
STOP_TIMEOUT = 30

CONF = '''\
[DEFAULT]
host = test-conductor
auth_strategy = noauth
rpc_transport = none
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = no-bios
enabled_boot_interfaces = fake
enabled_console_interfaces = no-console
enabled_deploy_interfaces = fake
enabled_firmware_interfaces = no-firmware
enabled_inspect_interfaces = no-inspect
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = no-raid
enabled_rescue_interfaces = no-rescue
enabled_storage_interfaces = noop
enabled_vendor_interfaces = no-vendor
# A test machine may have less free memory than a conductor wants.
minimum_memory_warning_only = True
graceful_shutdown_timeout = 5
log_file = {workdir}/ironic.log
[api]
host_ip = 127.0.0.1
port = {port}
[database]
connection = sqlite:///{workdir}/ironic.sqlite
[conductor]
automated_clean = False
graceful_shutdown_timeout = 5
[dhcp]
dhcp_provider = none
'''


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _bin(name):
    """The command of the Python environment the tests run in."""
    path = os.path.join(os.path.dirname(sys.executable), name)
    if not os.path.exists(path):
        raise RuntimeError('%s is not installed beside %s: install the '
                           'test extra (it brings ironic)' % (
                               name, sys.executable))
    return path


class IronicServer:
    """``with IronicServer() as ironic:`` a running Ironic."""

    def __init__(self):
        self.workdir = None
        self.process = None
        self.endpoint = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def start(self):
        self.workdir = tempfile.mkdtemp(prefix='ironic-')
        port = _free_port()
        self.endpoint = 'http://127.0.0.1:%d' % port
        conf = os.path.join(self.workdir, 'ironic.conf')
        with open(conf, 'w') as f:
            f.write(CONF.format(workdir=self.workdir, port=port))
        subprocess.run([_bin('ironic-dbsync'), '--config-file', conf,
                        'create_schema'], check=True, capture_output=True,
                       timeout=SAFETY_TIMEOUT)
        self.process = subprocess.Popen(
            [_bin('ironic'), '--config-file', conf],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=lifetime.die_with_parent())
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self):
        """Until the API answers and the conductor has registered
        fake-hardware (nodes cannot be enrolled before)."""
        deadline = time.monotonic() + SAFETY_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError('Ironic exited (%d):\n%s' % (
                    self.process.returncode, self.log_tail()))
            try:
                answer = requests.get(self.url('drivers'), headers=HEADERS,
                                      timeout=5)
                if answer.ok and any(d['name'] == 'fake-hardware'
                                     for d in answer.json()['drivers']):
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError('Ironic never became ready:\n' + self.log_tail())

    def stop(self):
        """SIGTERM by pid, then whatever it forked, by pidfd."""
        if self.process is not None:
            tree = lifetime.open_pidfds(
                lifetime.descendants(self.process.pid))
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout=STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            lifetime.end_processes(tree, STOP_TIMEOUT)
            self.process = None
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def log_tail(self, lines=30):
        try:
            with open(os.path.join(self.workdir, 'ironic.log')) as f:
                return ''.join(f.readlines()[-lines:])
        except OSError:
            return '(no log)'

    # -- what a test needs -----------------------------------------------

    def url(self, path):
        return '%s/v1/%s' % (self.endpoint, path)

    def request(self, method, path, **kwargs):
        answer = requests.request(method, self.url(path), headers=HEADERS,
                                  timeout=30, **kwargs)
        if not answer.ok:
            raise AssertionError('%s %s: %d %s' % (
                method, path, answer.status_code, answer.text))
        return answer.json() if answer.content else None

    def nova_conf_section(self):
        """``[ironic]`` as a nova.conf reaching this Ironic has it."""
        return textwrap.dedent('''\
            [ironic]
            auth_type = none
            endpoint_override = %s
            ''' % self.endpoint)

    def traits(self, node):
        return set(self.request('GET', 'nodes/%s/traits' % node)['traits'])

    def add_trait(self, node, trait):
        self.request('PUT', 'nodes/%s/traits/%s' % (node, trait))

    def node(self, node):
        return self.request('GET', 'nodes/%s' % node)

    def enroll(self, name, resource_class='baremetal', traits=(),
               available=True):
        """A fake-hardware node, with ``traits`` (an inspection's or an
        operator's), taken through Ironic's state machine to
        ``available`` and powered off, as a node Nova may schedule to."""
        node = self.request('POST', 'nodes', json={
            'name': name, 'driver': 'fake-hardware',
            'resource_class': resource_class,
            'properties': {'cpus': 4, 'memory_mb': 8192, 'local_gb': 100,
                           'cpu_arch': 'x86_64'}})
        for trait in traits:
            self.add_trait(node['uuid'], trait)
        if available:
            self._provision(node['uuid'], 'manage', 'manageable')
            self._provision(node['uuid'], 'provide', 'available')
            self.request('PUT', 'nodes/%s/states/power' % node['uuid'],
                         json={'target': 'power off'})
            self.wait_for(node['uuid'], 'power_state', 'power off')
        return node['uuid']

    def _provision(self, node, target, state):
        self.request('PUT', 'nodes/%s/states/provision' % node,
                     json={'target': target})
        self.wait_for(node, 'provision_state', state)

    def wait_for(self, node, field, value):
        """Until the node's ``field`` is ``value`` (Ironic's conductor
        moves it in the background)."""
        deadline = time.monotonic() + SAFETY_TIMEOUT
        while time.monotonic() < deadline:
            seen = self.node(node)
            if seen[field] == value:
                return
            if seen.get('last_error'):
                raise AssertionError('node %s: %s' % (node,
                                                      seen['last_error']))
            time.sleep(0.05)
        raise AssertionError('node %s never had %s %s' % (node, field,
                                                          value))
