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

"""Run tempest against the gate cloud: write tempest.conf, run a suite.

``run(cloud, workspace, suite)`` takes the dict the gate writes to
``.cloud/cloud.json``, writes ``<workspace>/etc/tempest.conf`` (this
plugin's ``[image_type_filter]`` options included), runs ``tempest run``
from ``cloud["venv"]`` and returns its counts and summary. Suites:

- ``plugin``: this project's tempest plugin (contrib/tempest);
- ``peer``: tempest's own compute API tests that need no guest network
  (PEER_REGEX below says which and why).

The compute and image references tempest needs are two small images made
once in Glance through the cloud's ``openstack`` client (the admin password
goes through the environment, never the command line).
"""

import argparse
import configparser
import json
import os
import pathlib
import re
import subprocess
import sys
import urllib.request

PLUGIN_REGEX = r'^image_type_tempest_plugin\.'

# Tempest's compute API tests that a cloud with no guest network, no
# Cinder and no console can pass, each about what the filters touch:
# - servers.test_create_server, test_servers, test_list_server_filters:
#   create, show, list (with filters) and update servers; their volume,
#   SSH and console cases skip themselves from tempest.conf.
# - admin.test_delete_server: delete (one in ERROR, another project's).
#   servers.test_delete_server, test_servers_negative and
#   test_list_servers_negative are out: their classes set
#   create_default_network and skip without Neutron.
# - servers.test_servers_microversions: rebuilds (2.54, 2.57); the
#   rebuilds in test_servers too. test_server_actions' test_rebuild_server
#   is out: it boots its server itself with no 'networks' (400 at 2.37)
#   and waits for SSH; the rest of that class is reboot, stop/start,
#   resize, lock, console (virt-driver features, nothing the filters
#   touch).
# - flavors and images.test_list_images: the flavors API, and the image
#   list as the compute API proxies it.
# Left out as well: attach_interfaces, multi_nic, addresses,
# device_tagging, server_rescue, novnc, server_password, personality
# (guest network, console or config drive); multiple_create (min_count
# boots at once); server_group (affinity filters, not ours);
# images.test_images*, test_image_metadata*, test_list_image_filters
# (server snapshots: FakeDriver uploads no image data); volumes and the
# other admin tests (migrations: one machine); availability_zone,
# instance_actions, server_metadata, server_tags, disk_config,
# servers_microversions (API bookkeeping the scheduler never sees).
PEER_REGEX = (r'^tempest\.api\.compute\.('
              r'servers\.test_create_server\.'
              r'|servers\.test_servers\.'
              r'|servers\.test_list_server_filters\.'
              r'|admin\.test_delete_server\.'
              r'|servers\.test_servers_microversions\.'
              r'|flavors\.'
              r'|images\.test_list_images\.)')

SUITES = {'plugin': PLUGIN_REGEX, 'peer': PEER_REGEX}

#: The names of the images tempest's [compute] image_ref and image_ref_alt
#: point at (made once, reused while the cloud lives).
REFERENCE_IMAGES = ('image-type-tempest-ref', 'image-type-tempest-ref-alt')
#: A second flavor the size of cloud.json's, for [compute] flavor_ref_alt:
#: tempest's filter-by-flavor tests need two.
ALT_FLAVOR = 'image-type-tempest-alt'

#: Seconds: a version document, one openstack client call, a whole suite.
HTTP_TIMEOUT = 10
CLIENT_TIMEOUT = 120
RUN_TIMEOUT = 3600
#: Tempest workers. The tests mostly wait on the cloud (polling a server's
#: status every second), so more workers than the machine's two cores
#: shorten a suite; tempest hands out whole test classes, and the plugin
#: has five.
CONCURRENCY = 4

#: Tempest features this cloud has not: no guest network, no console, no
#: snapshot data from FakeDriver, one machine.
FEATURES_OFF = (
    'change_password', 'console_output', 'resize', 'pause', 'suspend',
    'shelve', 'shelve_migrate', 'snapshot', 'rescue', 'stable_rescue',
    'vnc_console', 'spice_console', 'serial_console',
    'interface_attach', 'live_migration', 'cold_migration',
    'block_migration_for_live_migration', 'config_drive', 'personality',
    'attach_encrypted_volume', 'volume_multiattach', 'metadata_service',
    'swap_volume', 'volume_backed_live_migration',
    'hostname_fqdn_sanitization',
)


class RunError(Exception):
    """One line naming what failed."""


def _service_env(cloud):
    """Environment for the cloud's clients: admin credentials as OS_*,
    nothing inherited that could point elsewhere."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith('OS_') and not k.lower().endswith('_proxy')}
    admin = cloud['admin']
    env.update({
        'OS_AUTH_URL': cloud['auth_url'], 'OS_IDENTITY_API_VERSION': '3',
        'OS_REGION_NAME': cloud['region'],
        'OS_USERNAME': admin['username'], 'OS_PASSWORD': admin['password'],
        'OS_PROJECT_NAME': admin['project_name'],
        'OS_USER_DOMAIN_NAME': admin['user_domain_name'],
        'OS_PROJECT_DOMAIN_NAME': admin['project_domain_name'],
        'PATH': '%s:%s' % (pathlib.Path(cloud['venv']) / 'bin',
                           env.get('PATH', '/usr/bin:/bin')),
    })
    return env


def _openstack(cloud, *args):
    command = [str(pathlib.Path(cloud['venv']) / 'bin' / 'openstack'),
               *args]
    try:
        proc = subprocess.run(command, env=_service_env(cloud),
                              capture_output=True, text=True,
                              timeout=CLIENT_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise RunError('openstack %s: no answer in %d s' % (
            ' '.join(args[:2]), CLIENT_TIMEOUT))
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ['no output'])[-1]
        raise RunError('openstack %s failed: %s' % (' '.join(args[:2]),
                                                     last))
    return proc.stdout.strip()


def reference_format(cloud):
    """The configured format the most computes boot (raw on a tie), so
    tempest's own boots have the most hosts the filters allow."""
    counts = {fmt: sum(fmt in c['image_types'] for c in cloud['computes'])
              for fmt in cloud['image_files']}
    best = max(counts.values(), default=0)
    if not best:
        raise RunError('cloud.json: no format in image_files that any '
                       'compute boots')
    return min((f for f, n in counts.items() if n == best),
               key=lambda f: (f != 'raw', f))


def reference_images(cloud):
    """Ids of the two public images tempest boots and rebuilds to."""
    disk_format = reference_format(cloud)
    ids = []
    for name in REFERENCE_IMAGES:
        found = _openstack(cloud, 'image', 'list', '--name', name,
                           '--status', 'active', '-f', 'value', '-c', 'ID')
        if found:
            ids.append(found.split()[0])
            continue
        ids.append(_openstack(
            cloud, 'image', 'create', '--disk-format', disk_format,
            '--container-format', 'bare', '--public', '--file',
            cloud['image_files'][disk_format], '-f', 'value', '-c', 'id',
            name))
    return ids


def alt_flavor(cloud):
    """cloud.json's flavor_alt, or a public flavor like its flavor, made
    once."""
    if (cloud.get('flavor_alt') or {}).get('id'):
        return cloud['flavor_alt']['id']
    found = _openstack(cloud, 'flavor', 'list', '--all', '-f', 'json')
    for flavor in json.loads(found or '[]'):
        if flavor.get('Name') == ALT_FLAVOR:
            return flavor['ID']
    size = json.loads(_openstack(cloud, 'flavor', 'show',
                                 cloud['flavor']['id'], '-f', 'json'))
    return _openstack(cloud, 'flavor', 'create', '--public', '--ram',
                      str(size['ram']), '--vcpus', str(size['vcpus']),
                      '--disk', str(size['disk']), '-f', 'value', '-c', 'id',
                      ALT_FLAVOR)


def max_microversion(url):
    """The newest microversion an API announces at its root (no token)."""
    if not url.startswith(('http://', 'https://')):
        raise RunError('not an HTTP endpoint: %s' % url)
    try:
        with urllib.request.urlopen(  # noqa: S310 (scheme checked above)
                url, timeout=HTTP_TIMEOUT) as answer:
            document = json.load(answer)
    except (OSError, ValueError) as exc:
        raise RunError('version document of %s: %s' % (url, exc))
    versions = document.get('versions') or [document.get('version', {})]
    newest = [v.get('version') or v.get('max_version') for v in versions
              if v.get('status') == 'CURRENT']
    if not newest or not newest[0]:
        raise RunError('%s announces no current microversion' % url)
    return newest[0]


def enabled_filters(scheduler_conf):
    """nova-scheduler's [filter_scheduler] enabled_filters, so tempest
    skips the tests of filters the cloud does not run."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.read(scheduler_conf)
    return parser.get('filter_scheduler', 'enabled_filters', fallback=(
        'ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,'
        'ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter'))


def compute_root(cloud):
    """nova-api's root (the version document), from its endpoint."""
    return re.sub(r'/v2(\.1)?(/.*)?$', '/', cloud['endpoints']['compute'])


def tempest_conf(cloud, workspace, image_ref, image_ref_alt, compute_max,
                 placement_max, flavor_ref_alt=None):
    """tempest.conf as {section: {option: value}}."""
    admin = cloud['admin']
    region = cloud['region']
    plugin = {
        'image_files': ','.join('%s:%s' % item for item in
                                sorted(cloud['image_files'].items())),
        'reserved_trait': cloud.get('reserved_trait') or '',
        'scheduler_log': cloud['scheduler']['log'],
        'scheduler_workers': str(cloud['scheduler']['workers']),
    }
    if cloud.get('image_metadata_family'):
        plugin['image_metadata_family'] = cloud['image_metadata_family']
    return {
        'DEFAULT': {'log_dir': str(workspace / 'logs'),
                    'log_file': 'tempest.log'},
        'oslo_concurrency': {'lock_path': str(workspace / 'lock')},
        'auth': {
            'use_dynamic_credentials': 'True',
            'create_isolated_networks': 'False',
            'admin_username': admin['username'],
            'admin_password': admin['password'],
            'admin_project_name': admin['project_name'],
            'admin_domain_name': admin['user_domain_name'],
        },
        'identity': {'uri_v3': cloud['auth_url'], 'auth_version': 'v3',
                     'region': region},
        'service-clients': {'http_timeout': '60'},
        'compute': {
            'image_ref': image_ref, 'image_ref_alt': image_ref_alt,
            'flavor_ref': cloud['flavor']['id'],
            'flavor_ref_alt': flavor_ref_alt or cloud['flavor']['id'],
            'region': region,
            # 2.37: tempest's own boots then ask for networks='none'
            # instead of an automatic network the stand-in cannot give.
            'min_microversion': '2.37',
            'min_compute_nodes': str(len(cloud['computes'])),
            'max_microversion': compute_max,
            'build_timeout': '300', 'build_interval': '1',
        },
        'compute-feature-enabled': dict(
            {feature: 'False' for feature in FEATURES_OFF},
            scheduler_enabled_filters=enabled_filters(
                cloud['scheduler']['nova_conf'])),
        'image': {'region': region},
        'image-feature-enabled': {'api_v2': 'True'},
        'placement': {'region': region, 'max_microversion': placement_max},
        'validation': {'run_validation': 'False'},
        # The network endpoint only answers nova-api's reads (a stand-in):
        # tempest must not create networks or ports.
        'service_available': {
            'nova': 'True', 'glance': 'True',
            'neutron': 'True' if cloud.get('network_is_neutron') else
                       'False',
            'cinder': 'False', 'swift': 'False',
            'horizon': 'False'},
        'image_type_filter': plugin,
    }


def write_conf(path, sections):
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    for section, options in sections.items():
        parser[section] = options
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix('.tmp')
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as f:
        parser.write(f)
    os.replace(tmp, path)


_COUNT = re.compile(r'^ - (Passed|Skipped|Failed): (\d+)$', re.M)


def parse_totals(output):
    """stestr's Totals block -> counts and the block itself."""
    counts = {k.lower(): int(v) for k, v in _COUNT.findall(output)}
    start = output.rfind('Totals\n')
    if start < 0 or not {'passed', 'skipped', 'failed'} <= set(counts):
        return None
    return dict(counts, summary=output[start:].strip())


def run(cloud, workspace, suite):
    """Write tempest.conf, run ``suite``; return passed/failed/skipped and
    tempest's summary."""
    if suite not in SUITES:
        raise RunError('unknown suite %r (plugin or peer)' % suite)
    workspace = pathlib.Path(workspace).resolve()
    (workspace / 'logs').mkdir(parents=True, exist_ok=True)
    image_ref, image_ref_alt = reference_images(cloud)
    conf = workspace / 'etc' / 'tempest.conf'
    write_conf(conf, tempest_conf(
        cloud, workspace, image_ref, image_ref_alt,
        max_microversion(compute_root(cloud)),
        max_microversion(cloud['endpoints']['placement']),
        alt_flavor(cloud)))
    venv_bin = pathlib.Path(cloud['venv']) / 'bin'
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('OS_', 'TEMPEST_'))}
    if not (workspace / '.stestr').is_dir():
        subprocess.run([str(venv_bin / 'stestr'), 'init'], cwd=workspace,
                       env=env, check=True, capture_output=True,
                       timeout=CLIENT_TIMEOUT)
    command = [str(venv_bin / 'tempest'), 'run', '--config-file', str(conf),
               '--regex', SUITES[suite], '--concurrency', str(CONCURRENCY)]
    output_path = workspace / ('tempest-%s.out' % suite)
    try:
        proc = subprocess.run(command, cwd=workspace, env=env,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise RunError('tempest run (%s suite) did not end in %d s; see %s'
                       % (suite, RUN_TIMEOUT, workspace / 'logs'))
    output_path.write_text(proc.stdout)
    totals = parse_totals(proc.stdout)
    if totals is None:
        raise RunError('tempest run (%s suite) printed no totals (exit %d); '
                       'see %s' % (suite, proc.returncode, output_path))
    return totals


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python3 -m gate_cloud.tempest_run',
        description='Run a tempest suite against the gate cloud.')
    parser.add_argument('--cloud', default='.cloud/cloud.json',
                        help='the cloud.json the gate wrote')
    parser.add_argument('--suite', choices=sorted(SUITES), required=True)
    parser.add_argument('--venv', default=None,
                        help='virtualenv with tempest and the plugin '
                             '(default: cloud.json\'s venv)')
    parser.add_argument('--workspace', default=None,
                        help='tempest workspace (default: '
                             '<cloud.json dir>/tempest)')
    args = parser.parse_args(argv)
    cloud_path = pathlib.Path(args.cloud)
    try:
        cloud = json.loads(cloud_path.read_text())
    except (OSError, ValueError) as exc:
        print('tempest_run: cannot read %s: %s' % (cloud_path, exc),
              file=sys.stderr)
        return 2
    if args.venv:
        cloud['venv'] = str(pathlib.Path(args.venv).resolve())
    workspace = pathlib.Path(args.workspace or cloud_path.parent / 'tempest')
    try:
        result = run(cloud, workspace, args.suite)
    except RunError as exc:
        print('tempest_run: %s' % exc, file=sys.stderr)
        return 1
    print(result['summary'])
    print('%s suite: %d passed, %d failed, %d skipped' % (
        args.suite, result['passed'], result['failed'], result['skipped']))
    return 0 if result['failed'] == 0 and result['passed'] > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
