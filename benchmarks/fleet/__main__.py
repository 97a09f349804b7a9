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

"""``python3 -m benchmarks.fleet run|down|plot``."""

import argparse
import json
import pathlib
import signal
import sys

from benchmarks.fleet import gate


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python3 -m benchmarks.fleet',
        description='A real nova-scheduler choosing among a fleet of '
                    'compute nodes, in each scheduling mode (as root).')
    sub = parser.add_subparsers(dest='command', required=True)
    run = sub.add_parser('run', help='build the fleet cloud, boot the '
                         'workload in every mode, write the JSON')
    run.add_argument('--small', action='store_true',
                     help='CI\'s size: tens of nodes, tens of boots')
    run.add_argument('--nodes', type=int, help='compute nodes')
    run.add_argument('--boots', type=int, help='servers per mode')
    run.add_argument('--concurrency', type=int,
                     help='boots in flight at a time')
    run.add_argument('--json', default=None,
                     help='where the figures go (default: '
                          'benchmarks/results/fleet-latest.json)')
    run.add_argument('--keep', action='store_true',
                     help='leave the container running')
    sub.add_parser('down', help='stop a kept container, remove its rules')
    plot = sub.add_parser('plot', help='the plot of a run\'s JSON (needs '
                          'matplotlib: the demo\'s bench extra)')
    plot.add_argument('json')
    plot.add_argument('png')
    args = parser.parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _command(args)
    except gate.GateError as exc:
        print('benchmarks.fleet %s: %s' % (args.command, exc),
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print('benchmarks.fleet: interrupted; the container is stopped',
              file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _command(args):
    from benchmarks.fleet import run
    if args.command == 'run':
        return run.run('small' if args.small else 'full', keep=args.keep,
                       json_path=args.json or run.DEFAULT_JSON,
                       nodes=args.nodes, boots=args.boots,
                       concurrency=args.concurrency)
    if args.command == 'down':
        run.down()
        return 0
    from benchmarks.fleet import figures
    figures.plot(json.loads(pathlib.Path(args.json).read_text()), args.png)
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == '__main__':
    sys.exit(main())
