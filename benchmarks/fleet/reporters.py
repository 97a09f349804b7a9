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

"""The reporters at fleet size, on the node.

One ``virt-capabilities report`` per host group, as a compute node runs
it beside its nova-compute, keeping its group's nodes (``--provider`` for
each: a nova-compute serving many nodes names none of them in nova.conf,
as with ironic). Its config file says which driver the group stands for
(``shape.Group.reporter_driver``), its custom traits, and Placement
credentials of a Keystone user of its own (``fleet-reporter``, role
``service``, the reporter's documented least privilege), so that
Placement's request log tells its requests from nova-compute's.

Measured, all from Placement's request log (each request Placement
answered the reporters' user):

* **start-up**: every reporter started at the same moment; requests until
  every node carries its reporter's traits, per node;
* **idle**: requests in a window with nothing changing, per node per
  hour;
* **after a Placement restart**: requests in the same window after it;
* **traits lost**: nodes that lack a trait their reporter keeps, or
  nova-compute's image-type traits, at the end (must be 0).
"""

import configparser
import pathlib
import time

from benchmarks.fleet import gate
from benchmarks.fleet import schedlog
from benchmarks.fleet import shape

USER = 'fleet-reporter'
PROJECT = 'service'
ROLE = 'service'
CONF_DIR = pathlib.Path('/etc/nova')
STATE_DIR = pathlib.Path('/opt/stack/data/nova')
NOVA_CPU_CONF = '/etc/nova/nova-cpu.conf'
VIRT_CAPABILITIES = '/opt/stack/data/venv/bin/virt-capabilities'
#: How long the start-up may take (every node's traits in place).
STARTUP_DEADLINE = 1800
#: The VMware driver's image-metadata traits (README: nine on VMware) and
#: armv7l libvirt's; what the reporter keeps beyond the custom traits.
PLACEMENT_UNIT = 'devstack@placement-api.service'


def unit(group):
    return 'itf-fleet-reporter-%s' % group.name


def make_user(cloud, password):
    """The reporters' Keystone user, role ``service`` on the service
    project."""
    identity = cloud.conn.identity
    project = identity.find_project(PROJECT, domain_id='default')
    user = identity.find_user(USER, domain_id='default')
    if user is None:
        user = identity.create_user(name=USER, password=password,
                                    domain_id='default')
    role = identity.find_role(ROLE)
    identity.assign_project_role_to_user(project, user, role)


def write_config(group, index, password, interval):
    """The group's reporter config file; its path."""
    nova = configparser.ConfigParser(interpolation=None, strict=False)
    nova.read(NOVA_CPU_CONF)
    conf = configparser.ConfigParser(interpolation=None)
    conf['DEFAULT'] = {'compute_driver': group.reporter_driver,
                       'host': '%s%d' % (_hostname(), index)}
    placement = dict(nova['placement'])
    placement.update(username=USER, password=password,
                     project_name=PROJECT)
    conf['placement'] = placement
    conf['virt_capabilities'] = {
        'custom_traits': ','.join(group.reporter_traits),
        'host_architecture': group.architecture,
        'image_type_traits_owner': 'nova-compute',
        'state_file': str(STATE_DIR / ('fleet-reporter-%s.json'
                                       % group.name)),
        'status_file': str(STATE_DIR / ('fleet-reporter-status-%s.json'
                                        % group.name)),
    }
    path = CONF_DIR / ('fleet-reporter-%s.conf' % group.name)
    with open(path, 'w') as out:
        conf.write(out)
    path.chmod(0o600)
    return path


def _hostname():
    return pathlib.Path('/etc/hostname').read_text().strip()


def start(group, path, nodes, interval):
    argv = ['systemd-run', '--unit', unit(group), '--collect',
            VIRT_CAPABILITIES, 'report', '--config-file', str(path),
            '--interval', str(interval)]
    for node in nodes:
        argv += ['--provider', node]
    gate.node_run(argv)


def stop_all():
    for group in shape.GROUPS:
        gate.node_run(['systemctl', 'stop', unit(group) + '.service'],
                      check=False)


def providers_with(cloud, trait):
    """Names of the providers carrying ``trait`` (none if Placement does
    not know it yet)."""
    try:
        found = cloud.placement('/resource_providers?required=%s' % trait)
    except gate.HTTPError as exc:
        if exc.code == 400:  # no such trait yet
            return set()
        raise
    return {p['name'] for p in found['resource_providers']}


def expected(counts):
    """{trait: nodes that must carry it}: the reporters' and
    nova-compute's image-type traits."""
    want = {}
    for group in shape.GROUPS:
        names = set(shape.node_names(group.name, counts[group.name]))
        traits = list(group.reporter_traits)
        traits += [shape.format_trait(f) for f in group.formats]
        if group.architecture == 'armv7l':
            traits.append(shape.ARCH_TRAITS['armv7l'])
        for trait in traits:
            want.setdefault(trait, set()).update(names)
    return want


def missing(cloud, want):
    """{trait: nodes lacking it}, only traits some node lacks."""
    out = {}
    for trait, names in want.items():
        lacking = names - providers_with(cloud, trait)
        if lacking:
            out[trait] = sorted(lacking)
    return out


def count_requests(since, until):
    lines = gate.journal_lines(PLACEMENT_UNIT, since, until)
    return schedlog.user_requests(lines, USER)


def measure(cloud, counts, password, interval, window):
    """Start every reporter at once and count; the figures."""
    nodes = sum(counts.values())
    make_user(cloud, password)
    paths = {g.name: write_config(g, i, password, interval)
             for i, g in enumerate(shape.GROUPS, start=1)}
    want = expected(counts)
    started = time.time()
    for group in shape.GROUPS:
        start(group, paths[group.name],
              shape.node_names(group.name, counts[group.name]), interval)
    deadline = time.monotonic() + STARTUP_DEADLINE
    while missing(cloud, {t: n for t, n in want.items()
                          if t in (shape.REPORTED_TRAIT,
                                   shape.RESERVED_TRAIT)}):
        if time.monotonic() > deadline:
            raise gate.FleetError('reporters: not every node carries its '
                                  'traits %d s after start-up'
                                  % STARTUP_DEADLINE)
        time.sleep(1)
    settled = time.time()
    # The first cycle's last writes land before Placement shows them:
    # count what the reporters sent until then, and a second more.
    time.sleep(1)
    startup = count_requests(started, time.time())
    idle_from = time.time()
    time.sleep(window)
    idle = count_requests(idle_from, time.time())
    gate.node_run(['systemctl', 'restart', PLACEMENT_UNIT])
    restart_from = time.time()
    gate.wait_for_placement(cloud)
    time.sleep(window)
    after_restart = count_requests(restart_from, time.time())
    lost = missing(cloud, want)
    return {
        'nodes': nodes,
        'reporters': len(shape.GROUPS),
        'interval_s': interval,
        'window_s': window,
        'startup_s': round(settled - started, 1),
        'startup_requests': startup,
        'startup_requests_per_node': round(startup / nodes, 2),
        'idle_requests': idle,
        'idle_requests_per_node_per_hour': round(
            idle / nodes * 3600.0 / window, 2),
        'after_restart_requests': after_restart,
        'after_restart_requests_per_node': round(after_restart / nodes, 2),
        'traits_lost': sum(len(v) for v in lost.values()),
        'traits_lost_detail': {t: v[:5] for t, v in lost.items()},
    }
