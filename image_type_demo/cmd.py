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

"""``image-type-filter demo``: the whole story on an embedded Placement."""

import copy
import logging
import os
import select
import textwrap
import threading

from cliff import display

from image_type_common import control as control_mod
from image_type_common import exceptions
from image_type_common.cli import column_types
from image_type_common.cli import roles
from image_type_demo import demo
from image_type_demo import fleet
from placement_runner import embedded
from placement_runner import patched
from placement_runner import server as embedded_server

LOG = logging.getLogger(__name__)
#: The database URL may come from here instead of the command line, where
#: any user could read its password.
DATABASE_URL_ENV = 'IMAGE_TYPE_FILTER_DEMO_DATABASE_URL'
#: The formats that print the whole document, {hosts, requests}; the
#: others print tables of it.
WHOLE_DOCUMENT = ('json', 'yaml')
HOSTS_TITLE = 'Hosts (each reported from its own nova.conf):'
HOST_COLUMNS = ('host', 'compute_driver', 'formats')
REQUESTS_TITLE = 'Boot requests (%s):' % ', '.join(
    '%s:%d' % kv for kv in demo.RESOURCES.items())
REQUEST_COLUMNS = ('disk_format', 'image properties', 'filters',
                   'volume-backed', 'hosts')
#: The default view: hosts numbered, then one row per boot request and one
#: column per host number, then why each request nobody takes found none.
NUMBERED_HOST_COLUMNS = ('#',) + HOST_COLUMNS
MATRIX_TITLE = ('Which host takes which boot request (x: offered; %s):'
                % ', '.join('%s:%d' % kv for kv in demo.RESOURCES.items()))
REQUEST_LABEL = 'boot request'
REFUSED_TITLE = 'Boot requests no host takes:'
REFUSED_COLUMNS = (REQUEST_LABEL, 'reason')
#: What the default view fits in (the reasons wrap to it).
WIDTH = 100
OFFERED = 'x'


class Demo(display.DisplayCommandBase):
    """Show the filter at work on a mixed fleet, with no cloud needed.

    Starts a real Placement on 127.0.0.1, reports a mixed fleet (libvirt on
    qcow2, Ceph and LVM, Parallels, an Arm server, VMware, ironic, z/VM,
    and a host set aside for Trove) through the real reporter (which
    writes an ironic node's traits to its Ironic node, not run here: the
    ironic host carries nova-compute's traits only), then asks
    for hosts for every disk format with the filters on, once with them
    off, once volume-backed, once for a Trove image, and once for an image
    of each image-metadata family (hw_disk_bus, hw_vif_model, ...).

    Output (cliff's formatters, as every command): table (default) fits
    100 columns: the hosts, numbered; a matrix with a row per boot request
    and a column per host number, x where Placement offers the host; and
    why each request no host takes found none. json and yaml give the
    whole document (every list in full); value and csv the boot requests
    table, one row per request with its hosts named. -c picks columns of
    the hosts and boot requests tables, and shows those tables.
    """

    _epilog = roles.epilog('image-type-filter', 'demo')

    formatter_namespace = 'cliff.formatter.list'
    formatter_default = 'table'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--serve', action='store_true',
            help='Then keep the demo\'s Placement and fleet running for '
                 'hands-on use (candidates, status, openstack) and print '
                 'how to reach them; Ctrl-C (or SIGTERM) stops it.')
        placement = parser.add_argument_group(
            'embedded Placement', 'How the demo runs Placement. The default '
            'is SQLite behind one thread; the others serve it the way '
            'production does, with gunicorn API workers (needs the scale '
            'extra).')
        placement.add_argument(
            '--placement-backend', choices=embedded.EmbeddedPlacement.BACKENDS,
            default='sqlite',
            help='sqlite (default), or a private PostgreSQL cluster that is '
                 'removed with the demo.')
        placement.add_argument(
            '--placement-database-url', metavar='URL',
            default=os.environ.get(DATABASE_URL_ENV),
            help='An existing MySQL or PostgreSQL database (SQLAlchemy URL) '
                 'instead; it is kept, and so is what the demo writes (a '
                 'second run reuses the demo\'s hosts). Default: $%s, which '
                 'keeps a password off the process list.' % DATABASE_URL_ENV)
        patched.add_argument(placement)
        placement.add_argument(
            '--placement-workers', type=int, metavar='N',
            help='gunicorn API workers for a database other than SQLite '
                 '(default 4, at most %d).' % embedded_server.MAX_WORKERS)
        return parser

    def run(self, parsed_args):
        """As cliff's display commands run, except that the document is
        printed while the demo still runs (``--serve`` then keeps it
        running), not after."""
        parsed_args = self._run_before_hooks(parsed_args)
        self.formatter = self._formatter_plugins[parsed_args.formatter].obj
        tables(parsed_args, {'hosts': [], 'requests': []})  # -c, at once
        return self.take_action(parsed_args)

    def take_action(self, parsed_args):
        if self.app.options.verbose_level <= 1 and not self.app.options.debug:
            # The fleet's own reporter lines would bury the result.
            logging.getLogger('virt_capabilities').setLevel(logging.WARNING)

        def show(placement, document):
            self.produce_output(parsed_args, ('hosts', 'requests'),
                                (document['hosts'], document['requests']))
            if parsed_args.serve:
                self.serve(parsed_args, placement)

        demo.run(progress_stream=self.app.stderr, then=show,
                 placement_args=self.placement_args(parsed_args))
        return 0

    def placement_args(self, parsed_args):
        workers = parsed_args.placement_workers
        if embedded_server.workers_range_problem(workers):
            raise exceptions.ConfigError(
                '--placement-workers must be from 1 to %d, not %d'
                % (embedded_server.MAX_WORKERS, workers))
        return {'backend': parsed_args.placement_backend,
                'database_url': parsed_args.placement_database_url,
                'workers': parsed_args.placement_workers,
                'patch': parsed_args.placement_patch}

    def produce_output(self, parsed_args, column_names, data):
        """The document through the chosen cliff formatter: json and yaml
        format it as one object; the others format its tables."""
        stdout = self.app.stdout
        if parsed_args.formatter in WHOLE_DOCUMENT:
            self.formatter.emit_one(column_names, data, stdout, parsed_args)
            return 0
        document = dict(zip(column_names, data, strict=True))
        if parsed_args.formatter == 'table' and not parsed_args.columns:
            shown = matrix_tables(document)
        else:
            shown = tables(parsed_args, document)
        for title, columns, rows in shown:
            if parsed_args.formatter == 'table':
                stdout.write(title + '\n')
            self.formatter.emit_list(columns, rows, stdout,
                                     _fitted(parsed_args, title))
            if parsed_args.formatter == 'table':
                if title == HOSTS_TITLE:
                    stdout.writelines(host_notes(document['hosts']))
                stdout.write('\n')
        return 0

    def serve(self, parsed_args, placement):
        """Print how to reach Placement, then wait for Ctrl-C or SIGTERM."""
        # Machine formats keep stdout clean: the help goes to stderr then.
        out = (self.app.stdout if parsed_args.formatter == 'table'
               else self.app.stderr)
        control = self.app.control
        died = _watch(placement.process, control)
        try:
            # From the first line an operator can act on, a stop lands
            # here wherever it interrupts (even the printing itself).
            out.write('\n' + demo.connection_help(placement))
            out.flush()
            while not control.stop_requested:
                try:
                    control.wait(3600)
                except control_mod.ReloadRequested:
                    control.take_reload()  # nothing to re-read: keep serving
        except control_mod.Stopping:
            pass
        finally:
            died.watching = False
        if died.is_set():
            raise embedded.EmbeddedPlacementError(
                'the demo\'s Placement (pid %d) exited with code %s while '
                'serving; stopping'
                % (placement.pid, placement.process.poll()))
        self.app.stderr.write('stopping the demo\'s Placement\n')


def tables(parsed_args, document):
    """(title, columns, rows) of each table ``parsed_args`` shows: both
    with ``-f table``, the boot requests with value and csv (one table a
    program can read); each with the ``-c`` columns it has, and left out
    if it has none. A ``-c`` no table has is a ConfigError, and so is -c
    with json or yaml, which give the whole document."""
    shown = [
        (HOSTS_TITLE, HOST_COLUMNS,
         [(h['name'], h['compute_driver'],
           column_types.ListColumn(h['formats']))
          for h in document['hosts']]),
        (REQUESTS_TITLE, REQUEST_COLUMNS,
         [(r['disk_format'],
           ', '.join('%s=%s' % kv for kv in r['image_properties'].items())
           or '-', 'on' if r['filter_enabled'] else 'off',
           'yes' if r['volume_backed'] else 'no',
           column_types.ListColumn(r['candidates']) if r['candidates']
           else r['reason'])
          for r in document['requests']]),
    ]
    if parsed_args.formatter != 'table':
        shown = shown[-1:]
    if not parsed_args.columns:
        return shown
    if parsed_args.formatter in WHOLE_DOCUMENT:
        raise exceptions.ConfigError(
            '-c picks table columns; -f %s gives the whole document'
            % parsed_args.formatter)
    wanted = {_normalized(c) for c in parsed_args.columns}
    known = {_normalized(c) for _, columns, _ in shown for c in columns}
    unknown = [c for c in parsed_args.columns
               if _normalized(c) not in known]
    if unknown:
        raise exceptions.ConfigError(
            '-c: -f %s shows no column %s; its columns are %s'
            % (parsed_args.formatter, ', '.join(unknown), ', '.join(
                c for _, columns, _ in shown for c in columns)))
    selected = []
    for title, columns, rows in shown:
        keep = [_normalized(c) in wanted for c in columns]
        if any(keep):
            selected.append((
                title, [c for c, k in zip(columns, keep, strict=True) if k],
                [[v for v, k in zip(row, keep, strict=True) if k]
                 for row in rows]))
    return selected


def host_notes(hosts):
    """Lines under the hosts table for the hosts whose reporter keeps
    its traits elsewhere than on their provider (ironic nodes)."""
    return [textwrap.fill(
        '%s: the reporter keeps an ironic node\'s custom traits on its '
        'Ironic node, and nova-compute copies them to the provider, with '
        'the image-type traits it keeps itself; this demo runs no Ironic, '
        'so the provider has nova-compute\'s traits only.' % h['name'],
        WIDTH) + '\n' for h in hosts
        if h.get('reporter_writes') == fleet.ON_IRONIC_NODE]


def request_label(request):
    """A boot request in a few words: its format, properties, and what
    differs from the usual (volume-backed, filters off)."""
    words = [request['disk_format']]
    words += ['%s=%s' % kv for kv in request['image_properties'].items()]
    if request['volume_backed']:
        words.append('volume-backed')
    if not request['filter_enabled']:
        words.append('filters off')
    return ' '.join(words)


def matrix_tables(document):
    """The default view: (title, columns, rows) of the numbered hosts, the
    requests x hosts matrix, and the requests no host takes (if any)."""
    hosts = document['hosts']
    numbers = {h['name']: str(i) for i, h in enumerate(hosts, 1)}
    shown = [
        (HOSTS_TITLE, NUMBERED_HOST_COLUMNS,
         [(numbers[h['name']], h['name'], h['compute_driver'],
           column_types.ListColumn(h['formats'])) for h in hosts]),
        (MATRIX_TITLE, (REQUEST_LABEL,) + tuple(numbers.values()),
         [(request_label(r),) + tuple(
             OFFERED if h['name'] in r['candidates'] else ''
             for h in hosts) for r in document['requests']]),
    ]
    refused = [(request_label(r), r['reason'])
               for r in document['requests'] if not r['candidates']]
    if refused:
        shown.append((REFUSED_TITLE, REFUSED_COLUMNS, refused))
    return shown


def _fitted(parsed_args, title):
    """The reasons wrap to WIDTH unless --max-width says otherwise."""
    if title != REFUSED_TITLE or getattr(parsed_args, 'max_width', 1):
        return parsed_args
    fitted = copy.copy(parsed_args)
    fitted.max_width = WIDTH
    return fitted


def _normalized(column):
    """As cliff matches -c: case and spaces do not matter."""
    return column.lower().strip().replace(' ', '_')


def _watch(process, control):
    """An event set, and ``control`` told to stop, when ``process`` exits
    (a pidfd: woken by the exit itself, and never reaping it)."""
    died = threading.Event()
    died.watching = True
    pidfd = os.pidfd_open(process.pid)

    def wait():
        try:
            select.select([pidfd], [], [])
        finally:
            os.close(pidfd)
        if died.watching:
            died.set()
            control.stop()

    threading.Thread(target=wait, name='placement-watch', daemon=True).start()
    return died
