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

The project's job (``image-type-filter-devstack``) is a child of tempest's
``devstack-tempest``, itself a child of devstack's ``devstack``; Zuul
merges the chain's ``vars`` (a child's values win) and devstack's own
role (``write-devstack-local-conf``) writes local.conf from them. The
gate does the same with the same inputs: devstack's and tempest's job
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
import importlib.util
import json
import pathlib

from gate_cloud.processes import GateError

REPO = pathlib.Path(__file__).resolve().parent.parent
JOB = 'image-type-filter-devstack'
#: The chain's root above devstack's jobs, defined in OpenStack's
#: project-config (not in any tree here): its variables are the nodes'.
EXTERNAL_ROOTS = ('openstack-multinode-fips',)
WRITER = 'roles/write-devstack-local-conf/library/devstack_local_conf.py'


def machine(host_ip, image_url, git_base):
    """The facts of this machine that a Zuul node gets from Nodepool or
    from its pre-run playbooks."""
    return {
        'devstack_localrc': {
            # Nodepool's private address: the container's veth address.
            'HOST_IP': host_ip,
            'SERVICE_HOST': host_ip,
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
                '/opt/stack/requirements/upper-constraints.txt',
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
            'test-config': {'$TEMPEST_CONFIG': {
                # groups['compute'] of a one-node job: the controller.
                'compute': {'min_compute_nodes': 1}}},
        },
    }


def _job_files(devstack_tree, tempest_tree):
    return ([pathlib.Path(devstack_tree) / '.zuul.yaml']
            + sorted((pathlib.Path(tempest_tree) / 'zuul.d').glob('*.yaml'))
            + [REPO / '.zuul.yaml'])


def _jobs(files):
    import yaml  # the container's python3-yaml (see the module's doc)
    jobs = {}
    for path in files:
        for item in yaml.safe_load(path.read_text()) or ():
            job = item.get('job') if isinstance(item, dict) else None
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


def job_vars(devstack_tree, tempest_tree, job=JOB):
    """The variables Zuul gives ``job``: its parents' merged with its
    own, root first, as far as the chain is defined in these files."""
    jobs = _jobs(_job_files(devstack_tree, tempest_tree))
    chain = []
    name = job
    while name and name not in EXTERNAL_ROOTS:
        if name not in jobs:
            raise GateError('no job %s in %s' % (name, ', '.join(
                str(f) for f in _job_files(devstack_tree, tempest_tree))))
        chain.append(jobs[name])
        name = jobs[name].get('parent')
    result = {}
    for definition in reversed(chain):
        result = merge(result, definition.get('vars') or {})
    return result


def _writer(devstack_tree):
    path = pathlib.Path(devstack_tree) / WRITER
    spec = importlib.util.spec_from_file_location('devstack_local_conf',
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _unanswered(value, where=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _unanswered(item, where + (str(key),))
    elif isinstance(value, str) and '{{' in value:
        yield '.'.join(where)


def render(devstack_tree, tempest_tree, facts, path, job=JOB):
    """Write local.conf for ``job`` to ``path``; return the merged
    variables (the tempest run reads its own from them)."""
    variables = merge(job_vars(devstack_tree, tempest_tree, job), facts)
    wanted = {key: variables.get(key) or {} for key in (
        'devstack_localrc', 'devstack_local_conf', 'devstack_services',
        'devstack_plugins')}
    left = sorted(set(_unanswered(wanted)))
    if left:
        raise GateError('local.conf: no value on this machine for %s '
                        '(Jinja in the job variables; add it to '
                        'gate_cloud/localconf.py machine())' % ', '.join(left))
    writer = _writer(devstack_tree).LocalConf(
        wanted['devstack_localrc'], wanted['devstack_local_conf'], [],
        dict(wanted['devstack_services']), wanted['devstack_plugins'],
        None, None, None, None)
    writer.write(str(path))
    return variables


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python3 -m gate_cloud.localconf',
        description='Write local.conf for the job; print its variables '
                    'as JSON.')
    for name in ('devstack', 'tempest', 'path', 'host_ip', 'image_url',
                 'git_base'):
        parser.add_argument(name)
    args = parser.parse_args(argv)
    variables = render(args.devstack, args.tempest, machine(
        args.host_ip, args.image_url, args.git_base), args.path)
    print(json.dumps(variables))
    return 0


if __name__ == '__main__':
    import sys
    try:
        sys.exit(main())
    except GateError as exc:
        print('gate_cloud.localconf: %s' % exc, file=sys.stderr)
        sys.exit(1)
