"""``image-type-filter demo``: the whole story on an embedded Placement."""

import logging
import os
import select
import threading

from cliff import command

from image_type_common import control as control_mod
from image_type_common import exceptions
from image_type_demo import demo
from image_type_filter.cmd import common
from placement_runner import embedded
from placement_runner import server as embedded_server

LOG = logging.getLogger(__name__)
#: The database URL may come from here instead of the command line, where
#: any user could read its password.
DATABASE_URL_ENV = 'IMAGE_TYPE_FILTER_DEMO_DATABASE_URL'


class Demo(command.Command):
    """Show the filter at work on a mixed fleet, with no cloud needed.

    Starts a real Placement on 127.0.0.1, reports a mixed fleet (libvirt on
    qcow2, Ceph and LVM, Parallels, VMware, ironic, z/VM, and a host set
    aside for Trove) through the real reporter, then asks for hosts for
    every disk format with the filters on, once with them off, once
    volume-backed, and once for a Trove image.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_format_argument(parser)
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
        placement.add_argument(
            '--placement-patch', metavar='PATCH',
            help='Serve Placement with a patch applied, from a cached patched '
                 'copy (the installed package is not touched): '
                 '"root-required-prefilter" (contrib/placement/README.md: '
                 'root_required as cheap as required), or a patch file.')
        placement.add_argument(
            '--placement-workers', type=int, metavar='N',
            help='gunicorn API workers for a database other than SQLite '
                 '(default 4, at most %d).' % embedded_server.MAX_WORKERS)
        return parser

    def take_action(self, parsed_args):
        if self.app.options.verbose_level <= 1 and not self.app.options.debug:
            # The fleet's own reporter lines would bury the result.
            logging.getLogger('virt_capabilities').setLevel(logging.WARNING)

        def show(placement, result):
            self.emit(parsed_args, result)
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

    def emit(self, parsed_args, result):
        common.emit(self.app.stdout, parsed_args, result, [
            ('Hosts (each reported from its own nova.conf):',
             ['host', 'compute_driver', 'formats'],
             [(h['name'], h['compute_driver'], ', '.join(h['formats']))
              for h in result['hosts']]),
            ('Boot requests (VCPU:1, MEMORY_MB:512, DISK_GB:5):',
             ['disk_format', 'image properties', 'filters',
              'volume-backed', 'hosts'],
             [(r['disk_format'],
               ', '.join('%s=%s' % kv for kv in r['image_properties'].items())
               or '-', 'on' if r['filter_enabled'] else 'off',
               'yes' if r['volume_backed'] else 'no',
               ', '.join(r['candidates']) or r['reason'])
              for r in result['requests']]),
        ])

    def serve(self, parsed_args, placement):
        """Print how to reach Placement, then wait for Ctrl-C or SIGTERM."""
        # Machine formats keep stdout clean: the help goes to stderr then.
        out = (self.app.stdout if parsed_args.output_format == 'table'
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
