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

"""Every call the fleet benchmark makes into ``gate_cloud``, in one place.

The fleet cloud is the gate's: the same Debian root, sources from the
package index, upstream devstack and the gate's local.conf renderer, in a
systemd container of its own on a network of its own, named and
addressed apart from the gate's (``NETWORK``: bridge ``itffleet0``,
10.254.251.0/24, chains ``ITF-FLEET-*``) so both can run on one machine
at once. When the gate's container API changes, this
module is what follows it. Host-side helpers first, then what the node-side
code (``node.py``, ``reporters.py``) uses inside the container.
"""

import json
import pathlib
import subprocess
import tempfile

from gate_cloud import GateError
from gate_cloud import container
from gate_cloud import devstack_figures
from gate_cloud import devstack_job
from gate_cloud import devstack_node
from gate_cloud import localconf

REPO = devstack_job.REPO
#: The fleet's own state beside the gate's: its root, its container's and
#: its network's state files, its logs.
STATE = devstack_job.STATE / 'fleet'
ROOTFS = STATE / 'rootfs'
LOGS = STATE / 'logs'
NETWORK = container.Network('itffleet0', '10.254.251.0/24', 'ITF-FLEET',
                            STATE / 'networks')
MACHINE = 'itffleet'
ADDRESS = '10.254.251.2'
#: This checkout, as the gate lays it out in the root (the devstack
#: plugin's tree): the node-side code runs from there.
PROJECT_DIR = devstack_job.PROJECT_DIR
PYTHON = devstack_node.PYTHON
#: The fleet's own devstack plugin (devstack runs plugins in the order of
#: their names: this one before the project's). After devstack's install
#: phase (nova cloned and installed) the scale driver goes into nova's
#: tree, before any nova-compute starts. At the extra phase the project's
#: plugin would run its reporter once for each nova-compute with that
#: nova-compute's config files, which name a driver the reporter does not
#: know (the scale driver); the fleet's reporters are its own
#: (``reporters.py``), so n-cpu is marked off from then on, after this
#: plugin has done what stack.sh would do for n-cpu after the extra phase:
#: wait for the first nova-compute and map the hosts to the cell (the
#: ``fleet`` step waits for every node and maps the hosts again).
PLUGIN_NAME = 'fleet-scale-driver'
PLUGIN_DIR = '/opt/stack/' + PLUGIN_NAME
PLUGIN_SH = """# Written by the fleet benchmark (benchmarks/fleet/gate.py).
if [[ "$1" == "stack" && "$2" == "install" ]]; then
    cp {project}/benchmarks/fleet/scale_driver.py \\
        "$NOVA_DIR/nova/virt/{module}.py"
fi
if [[ "$1" == "stack" && "$2" == "extra" ]]; then
    is_nova_ready
    $TOP_DIR/tools/discover_hosts.sh
    disable_service n-cpu
fi
"""


class FleetError(GateError):
    """One line naming the step that failed."""


HTTPError = devstack_node.HTTPError


def prepare():
    """Host tools, the gate's base root and sdists (shared with the
    gate: downloaded once)."""
    LOGS.mkdir(parents=True, exist_ok=True)
    devstack_job.prepare(LOGS / 'prepare.log')


def lay_out_root(driver_module):
    """The fleet's root: the gate's layout, the fleet's name and
    address, its devstack plugin (a one-commit repository, as devstack
    clones plugins), no gate ``local.sh`` (it wires OVN, which this cloud
    has not)."""
    devstack_job._lay_out_root(ROOTFS)
    (ROOTFS / 'opt/stack/devstack/local.sh').unlink()
    plugin = ROOTFS / PLUGIN_DIR.lstrip('/')
    (plugin / 'devstack').mkdir(parents=True)
    (plugin / 'devstack' / 'plugin.sh').write_text(
        PLUGIN_SH.format(project=PROJECT_DIR, module=driver_module))
    identity = ['-c', 'user.name=fleet', '-c', 'user.email=fleet@localhost']
    for argv in (['init', '-q', '-b', 'master'], ['add', '-A', '.'],
                 ['commit', '-q', '-m', 'the fleet benchmark\'s plugin']):
        subprocess.run(['git'] + identity + ['-C', str(plugin)] + argv,
                       check=True, capture_output=True, timeout=60)


def box():
    return NETWORK.container(MACHINE, ADDRESS, STATE)


def boot(the_box):
    """The fleet's network up, then its container on it."""
    if NETWORK.state.path.exists():
        raise FleetError('the fleet\'s network %s is up (%s): python3 -m '
                         'benchmarks.fleet down' % (NETWORK.bridge,
                                                    NETWORK.state.path))
    NETWORK.up()
    the_box.start(ROOTFS, LOGS / 'container.log')


def stop(the_box):
    """The container powered off, then its network (bridge, rules) gone:
    safe to call twice, from any process."""
    the_box.stop()
    NETWORK.down()


def render(the_box, nodes):
    """The fleet's local.conf, rendered in the container."""
    tempest = [p.name for p in (ROOTFS / devstack_job.TREES.lstrip('/'))
               .iterdir() if p.name.startswith('tempest-')]
    the_box.run(
        ['python3', '-m', 'benchmarks.fleet.localconf', '/opt/stack/devstack',
         '%s/%s' % (devstack_job.TREES, tempest[0]),
         '/opt/stack/devstack/local.conf', ADDRESS,
         'file://' + devstack_job.IMAGE, devstack_job.GIT_BASE, str(nodes)],
        env={'PYTHONPATH': PROJECT_DIR}, timeout=120)
    LOGS.mkdir(parents=True, exist_ok=True)
    (LOGS / 'local.conf').write_text(
        (ROOTFS / 'opt/stack/devstack/local.conf').read_text())


def render_localconf(devstack, tempest, path, host_ip, image_url, git_base,
                     facts):
    """In the container: the gate job's controller's variables as the
    gate renders them (``localconf.render_nodes``, the controller at
    ``host_ip``: the subnet's ``.2``; the fleet is one node running what
    the controller runs), ``facts`` merged over them, written to ``path``
    by devstack's own writer; the variables."""
    with tempfile.TemporaryDirectory() as scratch:
        rendered = localconf.render_nodes((devstack, tempest),
                                          host_ip + '/24', image_url,
                                          git_base, scratch)
    merged = localconf.merge(rendered['variables']['controller'], facts)
    localconf.write(devstack, merged, pathlib.Path(path))
    return merged


def stack(the_box, started, step):
    """stack.sh, as the gate runs it (its log: the gate's logs
    directory, named after the fleet's machine); ``step`` prints the
    fleet's step line."""
    devstack_job._stack(the_box, started, node=MACHINE, step=step)


def on_node(the_box, step, args, timeout):
    """``python -m benchmarks.fleet.node ARGS`` in the container, as root
    with devstack's virtualenv; its ``[fleet]`` lines printed, its log
    kept; the JSON its last line holds."""
    LOGS.mkdir(parents=True, exist_ok=True)
    lines = devstack_job.logged_run(
        the_box.command([PYTHON, '-m', 'benchmarks.fleet.node'] + args,
                        env={'PYTHONPATH': PROJECT_DIR,
                             'PYTHONUNBUFFERED': '1'}),
        LOGS / ('%s.log' % step), 'step %s' % step,
        lambda line: line.startswith('[fleet]') and line, tail=20,
        timeout=timeout)
    return json.loads(lines[-1])


# --- inside the container (node.py, reporters.py) ---------------------

def node_run(argv, check=True, timeout=devstack_node.COMMAND_TIMEOUT):
    if check:
        return devstack_node.run(argv, timeout=timeout)
    return subprocess.run(argv, capture_output=True, text=True,
                          timeout=timeout).stdout


def cloud():
    """devstack's admin (openstacksdk, clouds.yaml)."""
    return devstack_node.Cloud()


def iniset(path, section, option, value):
    devstack_node.iniset(path, section, option, value)


def restart(unit):
    devstack_node.restart(unit)


def rss_mib(unit):
    return devstack_figures.rss_mib(unit)


def main_pid(unit):
    return devstack_node.main_pid(unit)


def journal_lines(unit, since, until=None):
    """``unit``'s journal lines from ``since`` to ``until`` (seconds since
    the epoch, widened to whole seconds), with microsecond timestamps."""
    argv = ['journalctl', '-u', unit, '-o', 'short-iso-precise',
            '--no-hostname', '--no-pager', '--since', '@%d' % int(since)]
    if until is not None:
        argv += ['--until', '@%d' % (int(until) + 1)]
    return devstack_node.run(argv, timeout=600).splitlines()


def wait_for_placement(the_cloud, deadline=300):
    def answers():
        try:
            the_cloud.placement('/')
        except GateError:
            return False
        return True
    devstack_node.wait_for(answers, deadline, 'Placement answering')


def wait_for(done, deadline, what):
    devstack_node.wait_for(done, deadline, what)


def image_file(disk_format):
    return devstack_node.image_file(disk_format)
