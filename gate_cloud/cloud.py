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

"""``up`` and ``down``: the whole cloud, in order, and its description.

Everything started is recorded by pid; any failure during ``up`` stops
what was started and puts back the system files changed, then fails with
one line naming the part.
"""

import concurrent.futures
import json
import secrets
import shutil
import socket
import time

from gate_cloud import configs
from gate_cloud import layout
from gate_cloud import preflight
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud import services
from gate_cloud.processes import GateError

CLOUD_JSON = 'cloud.json'
CREDS = 'credentials.json'

LIBVIRT = 'libvirt.LibvirtDriver'
#: The compute nodes: a real libvirt/QEMU node and fake ones beside it.
#: ``provider`` None means "as libvirt names it" (this machine's hostname).
COMPUTES = (
    {'host': 'libvirt-qemu', 'driver': 'libvirt.LibvirtDriver'},
    {'host': 'fake-raw', 'driver': 'fake.FakeDriver'},
    {'host': 'fake-trove', 'driver': 'fake.FakeDriver',
     'custom_traits': [layout.RESERVED_TRAIT]},
    {'host': 'fake-noraw', 'driver': 'fake.FakeDriver', 'exclude': ['raw']},
)


def log(msg):
    print('[gate %s] %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


def new_credentials():
    def pw():
        return secrets.token_urlsafe(18)
    return {'admin_password': pw(), 'service_password': pw(),
            'db_user': 'gate', 'db_password': pw(), 'rabbit_user': 'gate',
            'rabbit_password': pw(), 'erlang_cookie': secrets.token_hex(16)}


def credentials():
    return json.loads(layout.path(CREDS).read_text())


def libvirt_provider_name():
    """A first guess (libvirt reports the host name); the real name is
    read from Nova once the node registers."""
    return socket.gethostname()


def compute_records():
    out = []
    for spec in COMPUTES:
        rec = dict(spec)
        rec['nova_conf'] = str(services.nova_conf_path('compute-'
                                                       + spec['host']))
        rec['provider'] = (libvirt_provider_name()
                           if spec['driver'] == 'libvirt.LibvirtDriver'
                           else spec['host'])
        rec['reporter_log'] = str(layout.path('logs', 'reporter-%s.log'
                                              % spec['host']))
        rec['log'] = str(layout.path('logs', 'nova-compute-%s.log'
                                     % spec['host']))
        # nova.conf's [DEFAULT] log_file: nova-compute's oslo.log file, and
        # the reporter's too, for it follows nova.conf's log options.
        rec['service_log'] = str(layout.path('logs', 'nova-compute-%s-app.log'
                                             % spec['host']))
        rec.setdefault('custom_traits', [])
        out.append(rec)
    return out


def already_up():
    return any(processes.alive(r['pid']) for r in processes.records())


#: A run's results, kept in previous/ when the next cloud starts.
RESULTS = ('run.json', 'figures.json')


def fresh_state():
    """Wipe the last cloud's state; the virtualenv's stamp, the install
    logs and the last run's results (moved to previous/) stay."""
    if layout.STATE.exists():
        previous = layout.path('previous')
        for name in RESULTS:
            if layout.path(name).exists():
                previous.mkdir(exist_ok=True)
                layout.path(name).replace(previous / name)
        for entry in layout.STATE.iterdir():
            if entry.name.startswith('apt') or entry.name.startswith('pip') \
                    or entry.name in ('venv.stamp', 'previous'):
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    layout.STATE.mkdir(mode=0o700, exist_ok=True)
    for sub in ('logs', 'tmp'):
        layout.path(sub).mkdir(exist_ok=True)


def prepare():
    """Install what is missing (CI runs this beside the other builds)."""
    preflight.ensure_debian_packages(log)
    preflight.ensure_venv(log)


def up(keep=False):
    """Bring the cloud up; returns the cloud.json dict."""
    started = time.monotonic()
    if already_up():
        raise GateError('a cloud from %s is already running; run '
                        '`python3 -m gate_cloud down` first' % layout.STATE)
    processes.check_ports_free()
    preflight.ensure_debian_packages(log)
    preflight.ensure_venv(log)
    processes.check_ports_free()
    services.restore_system_files()  # a crashed cloud's, before the wipe
    fresh_state()
    creds = new_credentials()
    services.write(layout.path(CREDS), json.dumps(creds))
    try:
        cloud = _bring_up(creds)
    except BaseException:
        down(quiet=True)
        raise
    log('cloud up in %.0f s' % (time.monotonic() - started))
    return cloud


def _parallel(jobs):
    """Run independent set-up steps at once; the first failure wins."""
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        futures = [pool.submit(job) for job in jobs]
        for future in futures:
            future.result()


def _bring_up(creds):
    log('MariaDB and RabbitMQ (private, 127.0.0.1)')
    _parallel([lambda: services.start_mariadb(creds),
               lambda: services.start_rabbitmq(creds)])

    log('schemas: keystone, placement, glance, nova')
    _write_configs(creds)
    _parallel([lambda: _keystone_setup(creds), _placement_sync, _glance_sync,
               _nova_sync])

    log('Keystone')
    ks, ks_log = services.start_wsgi('keystone', layout.path('keystone'))
    services.wait_wsgi('keystone', ks, ks_log, '/v3')
    admin = rest.Client('admin', creds['admin_password'])
    _register(admin, creds)

    log('Placement, Glance, network stand-in, libvirt')
    pl, pl_log = services.start_wsgi('placement', layout.path('placement'))
    gl, gl_log = services.start_wsgi('glance', layout.path('glance'),
                                     worker_class='gthread', workers=1)
    services.start_network_standin()
    services.start_libvirt()
    services.wait_wsgi('placement', pl, pl_log)
    services.wait_wsgi('glance', gl, gl_log)

    log('nova-api, nova-conductor, nova-scheduler')
    api, api_log = services.start_wsgi('nova-api',
                                       layout.path('nova', 'api-etc'))
    services.start_nova_service('nova-conductor', 'nova-conductor',
                                services.nova_conf_path('conductor'))
    services.start_nova_service('nova-scheduler', 'nova-scheduler',
                                services.nova_conf_path('scheduler'))
    services.wait_wsgi('nova-api', api, api_log, '/')

    log('nova-compute x%d and a reporter beside each' % len(COMPUTES))
    computes = compute_records()
    procs = {}
    for c in computes:
        procs[c['host']] = services.start_nova_service(
            'nova-compute-' + c['host'], 'nova-compute', c['nova_conf'])
    _wait_providers(admin, computes, procs)
    processes.run('nova-manage cell_v2 discover_hosts', [
        layout.venv_bin('nova-manage'), '--config-file',
        services.nova_conf_path('api-etc/nova'), 'cell_v2', 'discover_hosts'])
    for c in computes:
        start_reporter(c)
    _wait_reporters(admin, computes)
    for c in computes:
        traits = _provider_traits_by_name(admin)[c['provider']]
        c['image_types'] = sorted(
            t[len('COMPUTE_IMAGE_TYPE_'):].lower() for t in traits
            if t.startswith('COMPUTE_IMAGE_TYPE_'))

    log('flavor, image files, cloud.json')
    _flavor(admin)
    image_files = _image_files()
    cloud = describe(creds, computes, image_files)
    wait_scheduler_ready(admin, since=0)
    return cloud


def _write_configs(creds):
    w = services.write_conf
    w(layout.path('keystone', 'keystone.conf'), configs.keystone_conf(creds))
    w(layout.path('placement', 'placement.conf'),
      configs.placement_conf(creds))
    glance = layout.path('glance')
    w(glance / 'glance-api.conf', configs.glance_conf(creds))
    for sub in ('images', 'staging', 'tasks', 'locks'):
        (glance / sub).mkdir(parents=True, exist_ok=True)
    paste = preflight.venv_file('etc/glance/glance-api-paste.ini')
    shutil.copy(paste, glance / 'glance-api-paste.ini')
    nova_paste = preflight.venv_file('etc/nova/api-paste.ini')
    layout.path('nova', 'api-etc').mkdir(parents=True, exist_ok=True)
    shutil.copy(nova_paste, layout.path('nova', 'api-paste.ini'))
    shutil.copy(nova_paste, layout.path('nova', 'api-etc', 'api-paste.ini'))
    w(layout.path('nova', 'api-etc', 'nova.conf'),
      configs.nova_api_conf(creds))
    w(services.nova_conf_path('conductor'),
      configs.nova_conductor_conf(creds))
    w(services.nova_conf_path('scheduler'),
      configs.nova_scheduler_conf(creds, filters_on=True))
    for c in compute_records():
        w(c['nova_conf'], configs.nova_compute_conf(creds, c))
    # Each Nova process's state_path (nova-compute writes compute_id there).
    for name in ['api', 'conductor', 'scheduler'] + [
            'compute-' + c['host'] for c in compute_records()]:
        layout.path('nova', name, 'locks').mkdir(parents=True, exist_ok=True)
        if name.startswith('compute-'):
            layout.path('nova', name, 'instances').mkdir(exist_ok=True)


def _manage(binary, *args, conf):
    processes.run('%s %s' % (binary, ' '.join(args[:2])),
                  [layout.venv_bin(binary), '--config-file', str(conf)]
                  + list(args), timeout=900)


def _keystone_setup(creds):
    conf = layout.path('keystone', 'keystone.conf')
    for keys in ('fernet-keys', 'credential-keys'):
        layout.path('keystone', keys).mkdir(mode=0o700, exist_ok=True)
    _manage('keystone-manage', 'fernet_setup', '--keystone-user', 'root',
            '--keystone-group', 'root', conf=conf)
    _manage('keystone-manage', 'credential_setup', '--keystone-user', 'root',
            '--keystone-group', 'root', conf=conf)
    _manage('keystone-manage', 'db_sync', conf=conf)
    env = layout.env_for_services()
    env['OS_BOOTSTRAP_PASSWORD'] = creds['admin_password']
    processes.run('keystone-manage bootstrap', [
        layout.venv_bin('keystone-manage'), '--config-file', conf,
        'bootstrap', '--bootstrap-username', 'admin',
        '--bootstrap-project-name', 'admin', '--bootstrap-role-name',
        'admin', '--bootstrap-service-name', 'keystone',
        '--bootstrap-region-id', layout.REGION,
        '--bootstrap-admin-url', layout.AUTH_URL,
        '--bootstrap-public-url', layout.AUTH_URL,
        '--bootstrap-internal-url', layout.AUTH_URL], env=env, timeout=600)


def _placement_sync():
    _manage('placement-manage', 'db', 'sync',
            conf=layout.path('placement', 'placement.conf'))


def _glance_sync():
    _manage('glance-manage', 'db_sync',
            conf=layout.path('glance', 'glance-api.conf'))


def _nova_sync():
    conf = layout.path('nova', 'api-etc', 'nova.conf')
    creds = credentials()
    _manage('nova-manage', 'api_db', 'sync', conf=conf)
    _manage('nova-manage', 'cell_v2', 'map_cell0', '--database_connection',
            configs.db_url('nova_cell0', creds), conf=conf)
    _manage('nova-manage', 'cell_v2', 'create_cell', '--name', 'cell1',
            conf=conf)
    _manage('nova-manage', 'db', 'sync', conf=conf)


SERVICES = (
    ('compute', 'nova', 'compute'),
    ('image', 'glance', 'image'),
    ('placement', 'placement', 'placement'),
    ('network', 'network-standin', 'network'),
)


def _register(admin, creds):
    ks = layout.AUTH_URL
    project = admin.post(ks + '/projects', {'project': {
        'name': 'service', 'domain_id': 'default'}})['project']
    role = admin.get(ks + '/roles?name=admin')['roles'][0]
    for role_name in ('service', 'reader', 'member'):
        if not admin.get(ks + '/roles?name=%s' % role_name)['roles']:
            admin.post(ks + '/roles', {'role': {'name': role_name}})
    service_role = admin.get(ks + '/roles?name=service')['roles'][0]
    for name in ('nova', 'glance', 'placement'):
        user = admin.post(ks + '/users', {'user': {
            'name': name, 'domain_id': 'default',
            'password': creds['service_password']}})['user']
        for r in (role, service_role):
            admin.put(ks + '/projects/%s/users/%s/roles/%s'
                      % (project['id'], user['id'], r['id']))
    for key, name, stype in SERVICES:
        svc = admin.post(ks + '/services', {'service': {
            'name': name, 'type': stype}})['service']
        for interface in ('public', 'internal', 'admin'):
            admin.post(ks + '/endpoints', {'endpoint': {
                'service_id': svc['id'], 'interface': interface,
                'region_id': layout.REGION,
                'url': layout.ENDPOINTS[key]}})


def _provider_traits_by_name(admin):
    return rest.all_traits(admin)


def _wait_providers(admin, computes, procs):
    """Until every compute has a provider in Placement. The fake driver
    names its node after [DEFAULT] host; libvirt after the hostname it
    reports, so the libvirt node's provider is the one left over."""
    fakes = {c['host'] for c in computes if c['driver'] != LIBVIRT}

    def probe():
        for host, (proc, plog) in procs.items():
            if proc.poll() is not None:
                raise GateError('nova-compute %s exited with %s; see %s'
                                % (host, proc.returncode, plog))
        try:
            have = {p['name'] for p in rest.providers(admin)}
        except GateError:
            return False
        others = have - fakes
        if not fakes <= have or len(others) != len(computes) - len(fakes):
            return False
        for c in computes:
            if c['driver'] == LIBVIRT:
                c['provider'] = others.pop()
        return True
    processes.wait_for('nova-compute resource providers in Placement',
                       probe, log=layout.path('logs'))


def start_reporter(compute):
    return processes.start('reporter-' + compute['host'], [
        layout.venv_bin('virt-capabilities'), 'report', '--config-file',
        compute['nova_conf'], '--wait', '300', '--interval',
        str(layout.REPORTER_INTERVAL)], log=compute['reporter_log'])


def _wait_reporters(admin, computes):
    """Every provider carries what it should: the reserved trait where set
    (by its reporter), image types (by nova-compute), none missing."""
    def probe():
        traits = _provider_traits_by_name(admin)
        for c in computes:
            have = set(traits.get(c['provider'], ()))
            if not set(c['custom_traits']) <= have:
                return False
            if c['driver'] == 'libvirt.LibvirtDriver' and \
                    'COMPUTE_IMAGE_TYPE_QCOW2' not in have:
                return False
        return True
    processes.wait_for('reporters setting %s' % layout.RESERVED_TRAIT, probe,
                       log=layout.path('logs'))


def _flavor(admin):
    for f in (layout.FLAVOR, layout.FLAVOR_ALT):
        admin.post(layout.ENDPOINTS['compute'] + '/flavors', {'flavor': {
            'name': f['name'], 'id': f['id'], 'ram': f['ram'],
            'vcpus': f['vcpus'], 'disk': f['disk']}})


def _image_files():
    images = layout.path('images')
    images.mkdir(exist_ok=True)
    files = {}
    for fmt in ('qcow2', 'vmdk', 'vdi', 'vhdx'):
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
    import struct
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


def describe(creds, computes, image_files):
    cloud = {
        'auth_url': layout.AUTH_URL,
        'region': layout.REGION,
        'admin': {'username': 'admin', 'password': creds['admin_password'],
                  'project_name': 'admin', 'user_domain_name': 'Default',
                  'project_domain_name': 'Default'},
        'endpoints': dict(layout.ENDPOINTS),
        'flavor': {'id': layout.FLAVOR['id'], 'name': layout.FLAVOR['name']},
        'flavor_alt': {'id': layout.FLAVOR_ALT['id'],
                       'name': layout.FLAVOR_ALT['name']},
        'image_files': image_files,
        'computes': [{k: c[k] for k in (
            'host', 'driver', 'provider', 'image_types', 'custom_traits',
            'nova_conf', 'reporter_log', 'service_log')} for c in computes],
        'reserved_trait': layout.RESERVED_TRAIT,
        'image_metadata_family': layout.IMAGE_METADATA_FAMILY,
        'scheduler': {'nova_conf': str(services.nova_conf_path('scheduler')),
                      # oslo.log's file ([DEFAULT] log_file), not stdout
                      'log': str(layout.path('logs',
                                             'nova-scheduler-app.log')),
                      'workers': layout.SCHEDULER_WORKERS},
        'venv': str(layout.VENV),
        'logs': str(layout.path('logs')),
    }
    services.write(layout.path(CLOUD_JSON), json.dumps(cloud, indent=2))
    services.write(layout.path('clouds.yaml'), clouds_yaml(cloud))
    return cloud


def clouds_yaml(cloud):
    a = cloud['admin']
    return '\n'.join([
        'clouds:',
        '  %s:' % layout.CLOUD_NAME,
        '    region_name: %s' % cloud['region'],
        '    identity_api_version: 3',
        '    auth:',
        '      auth_url: %s' % cloud['auth_url'],
        '      username: %s' % a['username'],
        '      password: %s' % json.dumps(a['password']),
        '      project_name: %s' % a['project_name'],
        '      user_domain_name: %s' % a['user_domain_name'],
        '      project_domain_name: %s' % a['project_domain_name'],
        ''])


def load():
    try:
        return json.loads(layout.path(CLOUD_JSON).read_text())
    except FileNotFoundError:
        raise GateError('no cloud is up (%s missing)'
                        % layout.path(CLOUD_JSON)) from None


# -- the scheduler's config: filters on and off -------------------------------

def wait_scheduler_ready(admin, since):
    """nova-scheduler reported in (updated_at after ``since``, epoch s)."""
    def probe():
        try:
            out = admin.get(layout.ENDPOINTS['compute']
                            + '/os-services?binary=nova-scheduler',
                            headers=rest.COMPUTE_HEADERS)
        except GateError:
            return False
        for svc in out['services']:
            if svc['state'] == 'up' and svc.get('updated_at') and \
                    _epoch(svc['updated_at']) >= since:
                return True
        return False
    processes.wait_for('nova-scheduler', probe,
                       log=layout.path('logs', 'nova-scheduler.log'))


def _epoch(stamp):
    import calendar
    stamp = stamp.split('.')[0].rstrip('Z')
    return calendar.timegm(time.strptime(stamp, '%Y-%m-%dT%H:%M:%S'))


def restart_scheduler(admin, filters_on=None):
    """Restart nova-scheduler (with the filters switched on or off)."""
    if filters_on is not None:
        services.write_conf(services.nova_conf_path('scheduler'),
                            configs.nova_scheduler_conf(credentials(),
                                                        filters_on))
    processes.stop('nova-scheduler')
    start_scheduler(admin)


def start_scheduler(admin):
    """Start nova-scheduler from its nova.conf and wait until it reports
    in."""
    since = time.time()
    services.start_nova_service('nova-scheduler', 'nova-scheduler',
                                services.nova_conf_path('scheduler'))
    wait_scheduler_ready(admin, since)


def down(quiet=False):
    """Stop every recorded process, put system files back, clear /tmp use."""
    if not quiet:
        log('stopping the cloud')
    services.destroy_domains()
    # nova-compute on libvirt ignores SIGTERM for minutes: short grace.
    grace = {r['name']: 5.0 for r in processes.records()
             if r['name'].startswith('nova-compute')}
    processes.stop_all(grace)
    services.restore_system_files()
    shutil.rmtree(layout.path('tmp'), ignore_errors=True)
    if not quiet:
        log('cloud stopped; state and logs stay in %s' % layout.STATE)


def admin_client():
    creds = credentials()
    return rest.Client('admin', creds['admin_password'])

