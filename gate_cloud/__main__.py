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

"""``python3 -m gate_cloud devstack ...`` and ``grenade ...``: the gate
jobs on upstream devstack and grenade, in a systemd container."""

import argparse
import signal
import sys

from gate_cloud import GateError


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python3 -m gate_cloud',
        description='The gate jobs on upstream devstack and grenade, in a '
                    'systemd container of their own.')
    sub = parser.add_subparsers(dest='command', required=True)
    ds_sub = _container_job(
        sub, 'devstack', 'the gate job on upstream devstack in a systemd '
        'container (gate_cloud/devstack_job.py)', 'stack.sh with this '
        'project\'s plugin, tempest, the phases, down', 'the sdists')
    ds_phase = ds_sub.add_parser(
        'phase', help='run one phase of `run` on the cloud `run --keep` '
                      'left (gate_cloud/devstack_job.py PHASES)')
    ds_phase.add_argument('name', help='the phase')
    ds_sub.add_parser('down', help='stop the container, remove its rules')
    ds_sub.add_parser('shell', help='a shell as the stack user on a node'
                      ).add_argument('node', nargs='?', default='controller',
                                     help="the nodeset's node (controller)")
    _container_job(
        sub, 'grenade', 'the upgrade job on grenade in the same container '
        '(gate_cloud/grenade_job.py); `devstack shell` and `devstack down` '
        'reach a kept one', 'base stack.sh (2026.1), grenade to 2026.2 '
        'with boots running, tempest, rollback, removal, down',
        'both series\' sdists')
    args = parser.parse_args(argv)
    # SIGTERM (CI's timeout, a kill) unwinds like Ctrl-C: the container is
    # stopped on the way out.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _command(args)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _container_job(sub, name, about, run_help, sdists):
    """A job in the gate's container: its ``run [--keep]`` and
    ``prepare``; its subparsers, for more."""
    job = sub.add_parser(name, help=about)
    actions = job.add_subparsers(dest='action', required=True)
    run = actions.add_parser('run', help=run_help)
    run.add_argument('--keep', action='store_true',
                     help='leave the container running')
    actions.add_parser('prepare', help='only the host tools, the base root '
                                       'and ' + sdists)
    return actions


def _command(args):
    from gate_cloud import devstack_job
    from gate_cloud import grenade_job
    job = grenade_job if args.command == 'grenade' else devstack_job
    try:
        if args.action == 'run':
            return job.run(keep=args.keep)
        if args.action == 'shell':
            return job.shell(args.node)
        if args.action == 'phase':
            return job.phase(args.name)
        if args.action == 'prepare':
            job.prepare()
        else:
            job.down()
        return 0
    except GateError as exc:
        print('gate_cloud %s: %s' % (args.command, exc), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print('gate_cloud %s: interrupted; the container is stopped'
              % args.command, file=sys.stderr)
        return 130


def _interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == '__main__':
    sys.exit(main())
