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

"""``python3 -m gate_cloud run|up [--keep]|phase NAME|down|prepare|pin``,
and the jobs on upstream devstack: ``devstack ...``, ``grenade ...``."""

import argparse
import signal
import sys

from gate_cloud import cloud
from gate_cloud import layout
from gate_cloud import series
from gate_cloud.processes import GateError


def _series_option(parser, many=False):
    known = ', '.join(series.available()) or 'none'
    if many:
        parser.add_argument(
            '--series', action='append', default=None,
            help='an OpenStack series whose pinned set to install (may be '
                 'repeated; default: the newest). Known: %s' % known)
    else:
        parser.add_argument(
            '--series', default=None,
            help='the OpenStack series the cloud runs, from its pinned set '
                 'in gate_cloud/constraints/ (default: the newest). Known: '
                 '%s' % known)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python3 -m gate_cloud',
        description='A small real OpenStack cloud on 127.0.0.1 for the gate '
                    'job: up, tests, figures, down.')
    sub = parser.add_subparsers(dest='command', required=True)
    run = sub.add_parser('run', help='up, the tempest suites, faults, '
                                     'figures, down; non-zero exit if '
                                     'anything failed')
    _series_option(run)
    run.add_argument('--phase', dest='only', action='append', default=None,
                     metavar='NAME',
                     help='up, only this phase or suite (repeatable; see '
                          'gate_cloud/runner.py PHASES and SUITES), down: '
                          'nothing else')
    up = sub.add_parser('up', help='bring the cloud up (and down again '
                                   'unless --keep)')
    up.add_argument('--keep', action='store_true',
                    help='leave it running and print a clouds.yaml')
    _series_option(up)
    sub.add_parser('down', help='stop everything the cloud started')
    one = sub.add_parser('phase', help='run one phase of `run` against the '
                                       'cloud `up --keep` left')
    one.add_argument('name', help='the phase (see gate_cloud/runner.py '
                                  'PHASES)')
    prepare = sub.add_parser(
        'prepare', help='only install what the cloud needs (Debian '
                        'packages, .venv-cloud-<series>)')
    _series_option(prepare, many=True)
    pin = sub.add_parser(
        'pin', help='resolve a series\' set in a scratch virtualenv, check '
                    'it and write gate_cloud/constraints/<series>.txt')
    pin.add_argument('name', metavar='SERIES',
                     help='the OpenStack series, e.g. 2026.2')
    pin.add_argument('requirements', metavar='REQUIREMENT', nargs='*',
                     help='the releases to resolve from, e.g. nova==34.0.0 '
                          '(default: the file\'s own "# requires:" line)')
    ds_sub = _container_job(
        sub, 'devstack', 'the gate job on upstream devstack in a systemd '
        'container (gate_cloud/devstack_job.py)', 'stack.sh with this '
        'project\'s plugin, tempest, the phases, down', 'the sdists')
    ds_phase = ds_sub.add_parser(
        'phase', help='run one phase of `run` on the cloud `run --keep` '
                      'left (gate_cloud/devstack_job.py PHASES)')
    ds_phase.add_argument('name', help='the phase')
    ds_sub.add_parser('down', help='stop the container, remove its rules')
    ds_sub.add_parser('shell', help='a shell as the stack user in it')
    _container_job(
        sub, 'grenade', 'the upgrade job on grenade in the same container '
        '(gate_cloud/grenade_job.py); `devstack shell` and `devstack down` '
        'reach a kept one', 'base stack.sh (2026.1), grenade to 2026.2 '
        'with boots running, tempest, the phases, rollback, removal, down',
        'both series\' sdists')
    args = parser.parse_args(argv)
    # SIGTERM (CI's timeout, a kill) unwinds like Ctrl-C: whatever was
    # started is stopped.
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
    try:
        if args.command == 'down':
            cloud.down()
            return 0
        if args.command == 'prepare':
            cloud.prepare(args.series)
            return 0
        if args.command == 'pin':
            series.pin(args.name, args.requirements, cloud.pypi_packages(),
                       cloud.log)
            return 0
        if args.command == 'up':
            described = cloud.up(args.series)
            if args.keep:
                print('# clouds.yaml (also %s):' % layout.path('clouds.yaml'))
                print(layout.path('clouds.yaml').read_text())
                print('# OS_CLIENT_CONFIG_FILE=%s OS_CLOUD=%s %s/bin/openstack'
                      ' server list' % (layout.path('clouds.yaml'),
                                        layout.CLOUD_NAME, described['venv']))
                print('# stop it: python3 -m gate_cloud down')
            else:
                cloud.down()
            return 0
        if args.command == 'grenade':
            from gate_cloud import grenade_job
            if args.action == 'run':
                return grenade_job.run(keep=args.keep)
            grenade_job.prepare()
            return 0
        if args.command == 'devstack':
            from gate_cloud import devstack_job
            if args.action == 'run':
                return devstack_job.run(keep=args.keep)
            if args.action == 'prepare':
                devstack_job.prepare()
                return 0
            if args.action == 'shell':
                return devstack_job.shell()
            if args.action == 'phase':
                return devstack_job.phase(args.name)
            devstack_job.down()
            return 0
        from gate_cloud import runner
        names = [args.name] if args.command == 'phase' else args.only or []
        known = list(runner.PHASES) + (
            list(runner.SUITES) if args.command == 'run' else [])
        unknown = [name for name in names if name not in known]
        if unknown:
            raise GateError('no phase %r (there are: %s)' % (
                unknown[0], ', '.join(known)))
        if args.command == 'phase':
            return runner.phase(args.name)
        return runner.run(args.series, args.only)
    except GateError as exc:
        print('gate_cloud %s: %s' % (args.command, exc), file=sys.stderr)
        return 1
    except Exception as exc:  # a bug of ours: still one line, and down
        import traceback
        cloud.down(quiet=True)
        where = layout.path('logs', 'gate-error.log')
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(traceback.format_exc())
        print('gate_cloud %s: internal error %s: %s (traceback in %s)'
              % (args.command, type(exc).__name__, exc, where),
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        cloud.down(quiet=True)
        print('gate_cloud %s: interrupted; cloud stopped' % args.command,
              file=sys.stderr)
        return 130


def _interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == '__main__':
    sys.exit(main())
