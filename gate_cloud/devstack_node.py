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

"""The devstack node as the gate's phases see it, from inside.

The phases run on the node itself (``devstack_job`` runs each phase's
module, ``gate_cloud.devstack_faults`` and the others, with ``python3 -m``
in the container as root, by devstack's global virtualenv's python):
``systemctl`` and ``journalctl`` are the node's, every service logs to
the journal, and the cloud is devstack's: its admin from
``/etc/openstack/clouds.yaml`` through openstacksdk (in that virtualenv,
for the services' own clients), the image and flavor tempest boots from
tempest.conf. ``DEST`` is devstack's (``/opt/stack``; grenade's upgraded
side is ``/opt/stack/new``, given in ``GATE_DEVSTACK_DEST``).
"""

import configparser
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

from gate_cloud import GateError

DEST = os.environ.get('GATE_DEVSTACK_DEST', '/opt/stack')
CLOUDS_YAML = '/etc/openstack/clouds.yaml'
CLOUD = 'devstack-admin'
#: The image and flavor tempest boots ([compute] image_ref, flavor_ref):
#: devstack's raw image and m1.nano.
TEMPEST_CONF = DEST + '/tempest/etc/tempest.conf'
COMMAND_TIMEOUT = 300
#: How long a deleted server may stay before its state is reset (seconds).
RE_DELETE = 20
#: nova.conf of nova-scheduler (and the API) on a devstack node.
NOVA_CONF = '/etc/nova/nova.conf'
#: devstack's global virtualenv: the services' and this project's commands.
#: devstack's DATA_DIR is /opt/stack/data whatever DEST is (stackrc sets
#: it before reading local.conf): grenade's two sides share it.
VENV_BIN = '/opt/stack/data/venv/bin'
#: What runs the phases on the node: that virtualenv has openstacksdk.
PYTHON = VENV_BIN + '/python3'
#: Where the phases' code (the gate's checkout's gate_cloud, copied afresh
#: for each phase) lies on the node, apart from the tree under test.
PHASES_DIR = '/opt/gate-phases'
#: Placement's unit: its request log (one line per request, with the
#: global request id nova-scheduler sent) is in its journal.
PLACEMENT = 'devstack@placement-api.service'
#: oslo.log's level names as syslog priorities (journald's PRIORITY).
LEVELS = {'CRITICAL': 2, 'ERROR': 3, 'WARNING': 4, 'INFO': 6, 'DEBUG': 7}
#: devstack logs with colours (its logging_context_format_string).
ANSI = re.compile(r'\x1b\[[0-9;]*m')


#: Seconds each API call may take.
TIMEOUT = 30.0
PLACEMENT_VERSION = '1.39'
COMPUTE_VERSION = '2.90'


class HTTPError(GateError):
    def __init__(self, method, path, code, text):
        super().__init__('%s %s answered %d: %s' % (method, path, code, text))
        self.code = code


def run(argv, timeout=COMMAND_TIMEOUT):
    result = subprocess.run(argv, capture_output=True, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        raise GateError('%s failed (exit %d): %s' % (
            ' '.join(argv[:3]), result.returncode,
            (result.stderr or result.stdout).strip()[-300:]))
    return result.stdout


def unit_argv(unit):
    """The command line ``unit`` runs (systemd's ExecStart)."""
    shown = run(['systemctl', 'show', '-p', 'ExecStart', '--value', unit])
    match = re.search(r'argv\[\]=([^;]+);', shown)
    if not match:
        raise GateError('no command line in %s\'s ExecStart: %s'
                        % (unit, shown.strip()[:200]))
    return match.group(1).split()


def config_files(argv):
    return [argv[i + 1] for i, arg in enumerate(argv[:-1])
            if arg == '--config-file']


def iniset(path, section, option, value):
    """devstack's own ``iniset`` on one file of the node."""
    run(['bash', '-c', 'source "$0/devstack/inc/ini-config" && '
         'iniset "$1" "$2" "$3" "$4"', DEST, path, section, option,
         str(value)])


def main_pid(unit):
    return int(run(['systemctl', 'show', '-p', 'MainPID', '--value',
                    unit]).strip() or 0)


def restart(unit):
    run(['systemctl', 'restart', unit])


def journal(unit, cursor=None):
    """(cursor of the last entry, [(priority, message)] after ``cursor``;
    none without one), systemd's own lines about the unit left out and
    devstack's colours taken off."""
    argv = ['journalctl', '-u', unit, '-o', 'json', '--no-pager']
    argv += ['--after-cursor', cursor] if cursor else ['-n', '1']
    entries = [json.loads(line) for line in run(argv).splitlines()
               if line.strip()]
    last = entries[-1]['__CURSOR'] if entries else cursor
    if cursor is None:
        return last, []
    records = []
    for entry in entries:
        if entry.get('SYSLOG_IDENTIFIER') == 'systemd':
            continue
        message = _message(entry)
        # A program that logs to its standard output gets the unit's
        # priority for every line; its own level leads the line.
        level = message.split(' ', 1)[0]
        records.append((LEVELS.get(level, int(entry.get('PRIORITY', 6))),
                        message))
    return last, records


def _message(entry):
    """An entry's text: journalctl's JSON gives a message holding control
    characters (devstack's colours) as its bytes, a list of numbers."""
    message = entry.get('MESSAGE', '')
    if isinstance(message, list):
        message = bytes(message).decode('utf-8', 'replace')
    return ANSI.sub('', str(message))


def logged_queries(records, request_id):
    """The ``GET /allocation_candidates`` queries Placement answered under
    ``request_id``, in order, from its request log's journal lines."""
    out = []
    for _, message in records:
        if request_id not in message or ' status: ' not in message:
            continue
        _, sep, after = message.partition('"GET ')
        if sep and '/allocation_candidates?' in after:
            out.append(after.split('"', 1)[0].split(' ', 1)[0])
    return out


def phase_main(name, body):
    """A phase's ``__main__``: ``body()``, and a GateError as one line
    naming the phase on standard error and exit 1."""
    try:
        body()
    except GateError as exc:
        print('gate_cloud devstack %s: %s' % (name, exc), file=sys.stderr)
        return 1
    return 0


def wait_for(done, deadline, what):
    """Poll ``done()`` each second until true, or raise naming ``what``."""
    end = time.monotonic() + deadline
    while not done():
        if time.monotonic() > end:
            raise GateError('%s: not within %ds' % (what, deadline))
        time.sleep(1)


def tempest_boot():
    """(image id, flavor id) tempest boots: devstack's raw image and
    m1.nano."""
    tempest = configparser.ConfigParser()
    if not tempest.read(TEMPEST_CONF):
        raise GateError('no %s: which image and flavor to boot'
                        % TEMPEST_CONF)
    return tempest['compute']['image_ref'], tempest['compute']['flavor_ref']


def isolation_traits(path=NOVA_CONF):
    """The traits nova-scheduler's ``[image_isolation] rules`` reserve
    (none unless ``enabled``): untagged boots never go to their hosts.
    A rule is ``CUSTOM_X``, ``KEY:CUSTOM_X`` or ``KEY=VALUE:CUSTOM_X``."""
    conf = configparser.ConfigParser(strict=False, interpolation=None)
    conf.read(path)
    if not conf.getboolean('image_isolation', 'enabled', fallback=False):
        return set()
    rules = conf.get('image_isolation', 'rules', fallback='')
    return {rule.rsplit(':', 1)[-1].strip()
            for rule in rules.split(',') if rule.strip()}


def image_file(disk_format, size='1M'):
    """An empty disk of ``disk_format`` made by qemu-img (devstack installs
    it), in a directory of its own: data Glance's format check accepts.
    1 MiB: a 16 MiB raw one, sent whole, timed out Glance's read of the
    request (30 s) on the grenade job's node."""
    path = pathlib.Path(tempfile.mkdtemp(prefix='gate-image-')) / (
        'disk.' + disk_format)
    run(['qemu-img', 'create', '-q', '-f', disk_format, str(path), size])
    return path


class Cloud:
    """devstack's admin through openstacksdk; each call one request,
    answered or a GateError naming it."""

    def __init__(self):
        import openstack  # devstack's virtualenv, which runs the phases
        self.conn = openstack.connect(cloud=CLOUD, api_timeout=TIMEOUT)
        self.auth_url = self.conn.config.get_auth_args()['auth_url']

    def call(self, service, method, path, body=None, microversion=None,
             **kwargs):
        """(status, response headers, body) of ``method path`` on the
        catalog's endpoint of ``service`` (an openstacksdk proxy)."""
        from keystoneauth1 import exceptions
        try:
            resp = getattr(self.conn, service).request(
                path, method, json=body, microversion=microversion,
                raise_exc=False, **kwargs)
        except exceptions.ClientException as exc:  # no answer, no token
            raise GateError('%s %s %s: %s' % (method, service, path,
                                              exc)) from None
        if resp.status_code >= 400:
            raise HTTPError(method, path, resp.status_code, resp.text[:300])
        return (resp.status_code, resp.headers,
                resp.json() if resp.content.strip() else None)

    def compute(self, method, path, body=None):
        return self.call('compute', method, path, body, COMPUTE_VERSION)

    def placement(self, path):
        return self.call('placement', 'GET', path, None,
                         PLACEMENT_VERSION)[2]

    def all_traits(self, by='name'):
        """{provider name (or ``by`` another field): sorted traits}, from
        Placement."""
        return {p[by]: sorted(self.placement(
            '/resource_providers/%s/traits' % p['uuid'])['traits'])
            for p in self.placement('/resource_providers')[
                'resource_providers']}

    # --- images and flavors

    def upload(self, name, disk_format, path=None, properties=None):
        """An image of ``disk_format`` from ``path`` (Glance checks the
        data against the format; by default ``image_file``'s): its id."""
        path = path or image_file(disk_format)
        body = {'name': name, 'disk_format': disk_format,
                'container_format': 'bare', **(properties or {})}
        image = self.call('image', 'POST', '/images', body)[2]
        with open(path, 'rb') as data:
            self.call('image', 'PUT', '/images/%s/file' % image['id'],
                      data=data, timeout=120, headers={
                          'Content-Type': 'application/octet-stream'})
        return image['id']

    def delete_image(self, image_id):
        _gone(self.call, 'image', 'DELETE', '/images/%s' % image_id)

    def create_flavor(self, name, ram, vcpus, disk):
        return self.compute('POST', '/flavors', {'flavor': {
            'name': name, 'ram': ram, 'vcpus': vcpus,
            'disk': disk}})[2]['flavor']['id']

    def delete_flavor(self, flavor_id):
        _gone(self.compute, 'DELETE', '/flavors/%s' % flavor_id)

    # --- servers

    def create(self, name, image_id, flavor_id):
        """(server id, the request id nova-api gave the boot: the global
        request id nova-scheduler sends Placement while it schedules)."""
        _, headers, out = self.compute('POST', '/servers', {'server': {
            'name': name, 'imageRef': image_id, 'flavorRef': flavor_id,
            'networks': 'none'}})
        return out['server']['id'], headers.get('x-openstack-request-id')

    def wait(self, server_id, deadline):
        """The server once ACTIVE or ERROR."""
        end = time.monotonic() + deadline
        while True:
            server = self.compute('GET', '/servers/%s' % server_id)[2][
                'server']
            if server['status'] in ('ACTIVE', 'ERROR'):
                return server
            if time.monotonic() > end:
                raise GateError('server %s still %s after %ds' % (
                    server['name'], server['status'], deadline))
            time.sleep(1)

    def boot(self, name, image_id, flavor_id, deadline):
        """One boot to its end (ACTIVE or ERROR); deleted after."""
        server_id, _ = self.create(name, image_id, flavor_id)
        try:
            return self.wait(server_id, deadline)
        finally:
            self.delete(server_id)

    def servers(self, prefix):
        return [s['id'] for s in self.compute(
            'GET', '/servers?all_tenants=1&name=^%s' % prefix)[2]['servers']]

    def delete(self, server_id, deadline=120):
        """Delete a server and wait until it is gone. A delete whose cast
        a broker restart lost (nova-compute still re-declaring its queue)
        leaves the server in task_state ``deleting``, and nova-api ignores
        every later delete of a server in that state; so a server still
        there ``RE_DELETE`` seconds on is reset (``os-resetState``, what an
        operator does) and deleted again."""
        path = '/servers/%s' % server_id
        end = time.monotonic() + deadline
        again = time.monotonic() + RE_DELETE
        asked = _gone(self.compute, 'DELETE', path)
        while asked and (server := self.find_server(server_id)):
            now = time.monotonic()
            if now >= end:
                raise GateError('server %s not deleted after %d s (%s, '
                                'task %s)' % (
                                    server_id, deadline, server['status'],
                                    server.get('OS-EXT-STS:task_state')))
            if now < again:
                time.sleep(0.5)
                continue
            again = now + RE_DELETE
            if server.get('OS-EXT-STS:task_state') == 'deleting':
                print('server %s still deleting %d s after its delete: '
                      'state reset, deleted again' % (server_id, RE_DELETE),
                      flush=True)
                asked = _gone(self.compute, 'POST', path + '/action',
                              {'os-resetState': {'state': 'error'}})
            asked = asked and _gone(self.compute, 'DELETE', path)

    def find_server(self, server_id):
        """The server, or None once Nova no longer has it."""
        try:
            return self.compute('GET', '/servers/%s' % server_id)[2][
                'server']
        except HTTPError as exc:
            if exc.code == 404:
                return None
            raise

    def set_compute_service(self, host, enabled, reason=None):
        services = self.compute('GET', '/os-services?binary=nova-compute'
                                '&host=%s' % host)[2]['services']
        if not services:
            raise GateError('no nova-compute service on host %s' % host)
        body = {'status': 'enabled' if enabled else 'disabled'}
        if reason:
            body['disabled_reason'] = reason
        self.compute('PUT', '/os-services/%s' % services[0]['id'], body)


def _gone(call, *args):
    """``call(*args)``, where a 404 means already gone: False then."""
    try:
        call(*args)
    except HTTPError as exc:
        if exc.code != 404:
            raise
        return False
    return True


#: The reason the hosts set aside for tempest's run without the filters
#: carry on their nova-compute service.
SET_ASIDE_REASON = 'gate: kept from untagged tempest boots (filters off)'


def set_aside(trait, enabled):
    """Disable (or enable again) the nova-compute of every host whose
    provider lacks ``trait`` or carries a trait ``[image_isolation]``
    reserves: with the filters off, tempest's own tests and moves would
    otherwise go where the filters keep them away (a host that cannot
    boot the image; a reserved host, which no OVN chassis is named after
    either). Prints the hosts."""
    cloud = Cloud()
    reserved = isolation_traits()
    hosts = sorted(name for name, traits in cloud.all_traits().items()
                   if trait not in traits or reserved & set(traits))
    for host in hosts:
        cloud.set_compute_service(host, enabled,
                                  None if enabled else SET_ASIDE_REASON)
    print(' '.join(hosts))


if __name__ == '__main__':
    if len(sys.argv) != 4 or sys.argv[1] != 'set-aside' or sys.argv[3] \
            not in ('disable', 'enable'):
        sys.exit('usage: devstack_node set-aside TRAIT disable|enable')
    sys.exit(phase_main('set-aside', lambda: set_aside(
        sys.argv[2], sys.argv[3] == 'enable')))
