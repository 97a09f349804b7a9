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

"""local.conf, rendered from the Zuul job ``.zuul.yaml`` defines.

The project's job (``image-type-filter-devstack-multinode``) is a child of
tempest's ``devstack-tempest``, itself a child of devstack's ``devstack``,
on devstack's two-node Debian nodeset; Zuul merges the chain's ``vars``
and ``group-vars`` (a child's values win), gives each node the ``vars``
with its groups' ``group-vars`` over them (Ansible's precedence: a group's
value replaces the job's whole), and devstack's own role
(``write-devstack-local-conf``) writes each node's local.conf from them.
The gate does the same with the same inputs: devstack's and tempest's job
files from the trees it runs, this repository's ``.zuul.yaml``, and
devstack's own writer (``roles/write-devstack-local-conf/library``, run,
not copied). The Zuul job and the local gate cannot drift apart. It runs
inside the devstack container (``python3 -m gate_cloud.localconf``),
whose python3 has Debian's python3-yaml; the gate's own python3 needs
nothing beyond the standard library.

What a Zuul node has and this machine has not is ``MACHINE``, one
override per fact, each with its reason; a Jinja expression left
unanswered after it is an error, so a new one upstream is noticed.
"""

import argparse
import copy
import json
import pathlib
import re
import runpy

from gate_cloud import GateError

REPO = pathlib.Path(__file__).resolve().parent.parent
JOB = 'image-type-filter-devstack-multinode'
GRENADE_JOB = 'image-type-filter-grenade'
#: roles/write-grenade-conf's defaults.
GRENADE_TEMPEST_CONCURRENCY = 2
GRENADE_TEST_TIMEOUT = 1200
BRANCH_DEFAULTS = 'roles/configure-grenade-branches/defaults/main.yaml'
#: What this machine changes in grenade's own settings, with the reason.
GRENADE_MACHINE = {
    # grenade's nova resource check pings its server's floating IP; the
    # fake driver boots no guest to answer (and no guest image is
    # reachable here). The gate runs this project's resources.sh itself,
    # at the points grenade would (gate_cloud/grenade_job.py).
    'VERIFY_RESOURCES': False,
}
#: The chain's root above devstack's jobs, defined in OpenStack's
#: project-config (not in any tree here): its variables are the nodes'.
EXTERNAL_ROOTS = ('openstack-multinode-fips', 'multinode')
WRITER = 'roles/write-devstack-local-conf/library/devstack_local_conf.py'


def machine(host_ip, image_url, git_base, dest='/opt/stack',
            service_host=None):
    """The facts of this machine that a Zuul node gets from Nodepool or
    from its pre-run playbooks (``dest``: the side's devstack ``DEST``;
    ``service_host``: the controller's address, the node's own by
    default)."""
    return {
        'devstack_localrc': {
            # Nodepool's private addresses: the containers' own.
            'HOST_IP': host_ip,
            'SERVICE_HOST': service_host or host_ip,
            # The job's external_bridge_mtu: a veth's 1500.
            'PUBLIC_BRIDGE_MTU': 1500,
            # devstack_libvirt_type's default (no nested virtualization).
            'LIBVIRT_TYPE': 'qemu',
            # Zuul places each required project in /opt/stack; here
            # devstack clones them from repositories made of the sdists.
            'GIT_BASE': 'file://' + git_base,
            'ERROR_ON_CLONE': False,
            # Only the package registries are reachable: the upper
            # constraints of the requirements repository on disk, and an
            # image file made here instead of cirros' download site.
            'TEMPEST_VENV_UPPER_CONSTRAINTS':
                dest + '/requirements/upper-constraints.txt',
            'DOWNLOAD_DEFAULT_IMAGES': False,
            'IMAGE_URLS': image_url,
            # No kernel module here: OVS's userspace datapath.
            'OVS_DATAPATH_TYPE': 'netdev',
            # Two cores: one worker per API, one conductor for all cells.
            'API_WORKERS': 1,
            'CELLSV2_SETUP': 'singleconductor',
            # The container shares this machine's kernel: the gate does
            # not retune its memory, network or swap.
            'ENABLE_SYSCTL_MEM_TUNING': False,
            'ENABLE_SYSCTL_NET_TUNING': False,
            'ENABLE_ZSWAP': False,
        },
        'devstack_local_conf': {
            'post-config': {'$NEUTRON_CONF': {
                'DEFAULT': {'global_physnet_mtu': 1500}}},
        },
    }


#: The Jinja of the jobs' variables that names the nodeset: Nodepool's
#: addresses and the inventory's groups, answered per node (``answers``).
HOSTVARS = re.compile(r"\{\{\s*hostvars\[(?:'(\w+)'|inventory_hostname)\]"
                      r"\['nodepool'\]\['private_ipv4'\]\s*\}\}")
COMPUTE_COUNT = re.compile(r"\{\{\s*groups\['compute'\] \| "
                           r"default\(\['controller'\]\) \| length\s*\}\}")
#: grenade's devstack_bases, as its grenade-base job names them: Jinja
#: the job's values refer to.
BASES = re.compile(r'\{\{\s*devstack_bases\.(\w+)\s*\}\}')


def answers(value, node, addresses, groups, bases=None):
    """``value`` with the nodeset's Jinja answered for ``node``: a node's
    private address (``addresses``), the compute group's size, and
    grenade's ``bases`` (its ``devstack_bases``) where given."""
    if isinstance(value, dict):
        return {key: answers(item, node, addresses, groups, bases)
                for key, item in value.items()}
    if not isinstance(value, str):
        return value
    if bases is not None:
        value = BASES.sub(lambda m: bases[m.group(1)], value)
    value = HOSTVARS.sub(lambda m: addresses[m.group(1) or node], value)
    return COMPUTE_COUNT.sub(
        str(len(groups.get('compute', ['controller']))), value)


def _job_files(devstack_tree, tempest_tree, grenade_tree=None):
    return ([pathlib.Path(devstack_tree) / '.zuul.yaml']
            + sorted((pathlib.Path(tempest_tree) / 'zuul.d').glob('*.yaml'))
            + ([pathlib.Path(grenade_tree) / '.zuul.yaml'] if grenade_tree
               else [])
            + [REPO / '.zuul.yaml'])


def _yaml(path):
    import yaml  # the container's python3-yaml (see the module's doc)
    return yaml.safe_load(pathlib.Path(path).read_text())


def _jobs(files, kind='job'):
    """{name: definition} of the files' jobs (or ``kind``: nodesets)."""
    jobs = {}
    for path in files:
        for item in _yaml(path) or ():
            job = item.get(kind) if isinstance(item, dict) else None
            # The first definition without a branch matcher: the one a
            # master change runs.
            if job and 'branches' not in job:
                jobs.setdefault(job['name'], job)
    return jobs


def merge(base, child):
    """Zuul's merge of job variables: dictionaries merge key by key, any
    other value of the child replaces the parent's."""
    result = copy.deepcopy(base)
    for key, value in child.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def job_vars(devstack_tree, tempest_tree, job=JOB, grenade_tree=None,
             key='vars'):
    """The variables Zuul gives ``job`` (``key``: its ``group-vars``, by
    group): its parents' merged with its own, root first, as far as the
    chain is defined in these files."""
    return _chain(devstack_tree, tempest_tree, job, grenade_tree, key)[0]


def _chain(devstack_tree, tempest_tree, job, grenade_tree=None,
           key='vars'):
    """(``key``'s merged values, the nodeset the job runs on)."""
    files = _job_files(devstack_tree, tempest_tree, grenade_tree)
    jobs = _jobs(files)
    chain = []
    name = job
    while name and name not in EXTERNAL_ROOTS:
        if name not in jobs:
            raise GateError('no job %s in %s' % (name, ', '.join(
                str(f) for f in files)))
        chain.append(jobs[name])
        name = jobs[name].get('parent')
    result = {}
    nodeset = None
    for definition in reversed(chain):
        result = merge(result, definition.get(key) or {})
        nodeset = definition.get('nodeset', nodeset)
    return result, _jobs(files, 'nodeset').get(nodeset)


def nodes(devstack_tree, tempest_tree, subnet, job=JOB):
    """[(node, address, its groups)] of the job's nodeset, the controller
    first; addresses ``.2``, ``.3``... of ``subnet``, in the nodeset's
    order. A nodeset defined outside these files (project-config's
    single-node ones) is one node, the controller."""
    nodeset = _chain(devstack_tree, tempest_tree, job)[1] or {
        'nodes': [{'name': 'controller'}]}
    names = [n['name'] for n in nodeset['nodes']]
    names.sort(key=lambda n: n != 'controller')
    base = subnet.rsplit('.', 1)[0]
    return [(name, '%s.%d' % (base, i + 2),
             sorted(g['name'] for g in nodeset.get('groups', ())
                    if name in g['nodes']))
            for i, name in enumerate(names)]


def node_vars(variables, group_vars, groups):
    """A node's variables: the job's, each of its groups' over them
    (Ansible's precedence, groups in name order; a group's
    ``devstack_localrc`` replaces the job's whole, as Ansible's default
    ``hash_behaviour`` does)."""
    result = dict(variables)
    for group in sorted(groups):
        result.update(group_vars.get(group) or {})
    return result


def _unanswered(value, where=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _unanswered(item, where + (str(key),))
    elif isinstance(value, str) and '{{' in value:
        yield '.'.join(where)


def render_nodes(trees, subnet, image_url, git_base, out, job=JOB):
    """Each node's local.conf as ``out/local.conf.NODE``; return
    ``{'nodes': nodes(), 'variables': {node: its variables}}``."""
    devstack_tree, tempest_tree = trees
    members = nodes(devstack_tree, tempest_tree, subnet, job)
    addresses = {name: address for name, address, _ in members}
    groups = {}
    for name, _, its_groups in members:
        for group in its_groups:
            groups.setdefault(group, []).append(name)
    variables = job_vars(devstack_tree, tempest_tree, job)
    group_vars = job_vars(devstack_tree, tempest_tree, job, key='group-vars')
    result = {}
    for name, address, its_groups in members:
        facts = machine(address, image_url, git_base,
                        service_host=addresses['controller'])
        own = answers(node_vars(variables, group_vars, its_groups), name,
                      addresses, groups)
        result[name] = merge(own, facts)
        write(devstack_tree, result[name],
              pathlib.Path(out) / ('local.conf.%s' % name))
    return {'nodes': members, 'variables': result}


def write(devstack_tree, variables, path):
    """local.conf from the merged variables, by devstack's own writer."""
    wanted = {key: variables.get(key) or {} for key in (
        'devstack_localrc', 'devstack_local_conf', 'devstack_services',
        'devstack_plugins')}
    left = sorted(set(_unanswered(wanted)))
    if left:
        raise GateError('local.conf: no value on this machine for %s '
                        '(Jinja in the job variables; add it to '
                        'gate_cloud/localconf.py machine())' % ', '.join(left))
    local_conf = runpy.run_path(str(pathlib.Path(devstack_tree) / WRITER))
    writer = local_conf['LocalConf'](
        wanted['devstack_localrc'], wanted['devstack_local_conf'], [],
        dict(wanted['devstack_services']), wanted['devstack_plugins'],
        None, None, None, None)
    writer.write(str(path))


def render_grenade(trees, host_ip, image_url, git_base, job=GRENADE_JOB,
                   root='/'):
    """What the grenade job's pre-run writes: each side's local.conf
    (its ``devstack_localrc`` is ``grenade_devstack_localrc``'s shared
    values combined with the side's own, as grenade's pre.yaml does) and
    grenade's ``localrc`` and ``pluginrc`` (roles/write-grenade-conf).
    ``trees``: the devstack (target), tempest and grenade trees; ``root``:
    where the node's ``/`` is. Return the merged variables."""
    devstack_tree, tempest_tree, grenade_tree = trees
    variables = job_vars(devstack_tree, tempest_tree, job, grenade_tree)
    variables = answers(variables, 'controller', {'controller': host_ip},
                        {}, variables['devstack_bases'])
    bases = variables['devstack_bases']
    root = pathlib.Path(root)
    grenade = variables.get('grenade_devstack_localrc') or {}
    for side in ('old', 'new'):
        facts = machine(host_ip, image_url, git_base, bases[side])
        localrc = dict(grenade.get('shared') or {})
        localrc.update(grenade.get(side) or {})
        side_vars = merge(dict(variables, devstack_localrc=localrc), facts)
        write(devstack_tree, side_vars,
              root / bases[side].lstrip('/') / 'devstack' / 'local.conf')
    defaults = _yaml(pathlib.Path(grenade_tree) / BRANCH_DEFAULTS)
    branches = {
        'from': variables.get('grenade_from_branch',
                              defaults['grenade_from_branch']),
        'to': variables.get('grenade_to_branch',
                            defaults['grenade_to_branch'])}
    grenade_dir = root / bases['new'].lstrip('/') / 'grenade'
    (grenade_dir / 'localrc').write_text(
        grenade_localrc(bases['shared'], branches, merge(
            variables.get('grenade_localrc') or {}, GRENADE_MACHINE)))
    (grenade_dir / 'pluginrc').write_text(
        ''.join('enable_grenade_plugin %s %s\n' % item for item in
                (variables.get('devstack_plugins') or {}).items()))
    return variables


def grenade_localrc(base_dir, branches, extra):
    """grenade's localrc as roles/write-grenade-conf's template writes
    it (no Jinja here: the container's python3 has none; a unit test
    holds these lines to the template's)."""
    lines = [
        'BASE_RELEASE=old',
        'BASE_RELEASE_DIR=%s/$BASE_RELEASE' % base_dir,
        'BASE_DEVSTACK_DIR=$BASE_RELEASE_DIR/devstack',
        'BASE_DEVSTACK_BRANCH=%s' % branches['from'],
        'TARGET_RELEASE=new',
        'TARGET_RELEASE_DIR=%s/$TARGET_RELEASE' % base_dir,
        'TARGET_DEVSTACK_DIR=$TARGET_RELEASE_DIR/devstack',
        'TARGET_DEVSTACK_BRANCH=%s' % branches['to'],
        'TARGET_RUN_SMOKE=False',
        'SAVE_DIR=$BASE_RELEASE_DIR/save',
        'TEMPEST_CONCURRENCY=%d' % GRENADE_TEMPEST_CONCURRENCY,
        'export OS_TEST_TIMEOUT=%d' % GRENADE_TEST_TIMEOUT,
        'VERBOSE=False',
        'PLUGIN_DIR=$TARGET_RELEASE_DIR',
        '# Additional variables',
    ] + ['%s=%s' % item for item in extra.items()]
    return '\n'.join(lines) + '\n'


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python3 -m gate_cloud.localconf',
        description='Write each node\'s local.conf for the job; print the '
                    'nodes and their variables as JSON.')
    parser.add_argument('--grenade', metavar='TREE',
                        help="the grenade job's files instead: PATH is "
                        "ignored, each side's local.conf and grenade's "
                        "localrc are written where the job puts them")
    parser.add_argument('devstack')
    parser.add_argument('tempest')
    parser.add_argument('path', help='the directory of the nodes\' '
                        'local.conf files')
    parser.add_argument('network', help="the nodes' /24 (grenade: the "
                        "node's address)")
    parser.add_argument('image_url')
    parser.add_argument('git_base')
    args = parser.parse_args(argv)
    if args.grenade:
        variables = render_grenade(
            (args.devstack, args.tempest, args.grenade), args.network,
            args.image_url, args.git_base)
    else:
        variables = render_nodes((args.devstack, args.tempest),
                                 args.network, args.image_url,
                                 args.git_base, args.path)
    print(json.dumps(variables))
    return 0


if __name__ == '__main__':
    import sys
    try:
        sys.exit(main())
    except GateError as exc:
        print('gate_cloud.localconf: %s' % exc, file=sys.stderr)
        sys.exit(1)
