"""``image-type-filter demo``: the whole story on an embedded Placement."""

import logging

from cliff import command

from image_type_common import control as control_mod
from image_type_demo import demo
from image_type_filter.cmd import common
from placement_runner import embedded


class Demo(command.Command):
    """Show the filter at work on a mixed fleet, with no cloud needed.

    Starts a real Placement on 127.0.0.1, reports a mixed fleet (libvirt on
    qcow2, Ceph and LVM, Parallels, VMware, ironic, z/VM, Hyper-V, and a
    host set aside for Trove) through the real reporter, then asks for hosts
    for every disk format with the filters on, once with them off, once
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
            help='An existing MySQL or PostgreSQL database (SQLAlchemy URL) '
                 'instead; it is kept, and so is what the demo writes.')
        placement.add_argument(
            '--placement-patch', metavar='PATCH',
            help='Serve Placement with a patch applied, from a cached patched '
                 'copy (the installed package is not touched): '
                 '"root-required-prefilter" (contrib/placement/README.md: '
                 'root_required as cheap as required), or a patch file.')
        placement.add_argument(
            '--placement-workers', type=int, metavar='N',
            help='gunicorn API workers for a database other than SQLite '
                 '(default 4).')
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
        out.write('\n' + demo.connection_help(placement))
        out.flush()
        control = self.app.control
        while not control.stop_requested:
            try:
                control.wait(3600)
            except control_mod.Stopping:
                break
            except control_mod.ReloadRequested:
                control.take_reload()  # nothing to re-read: keep serving
        self.app.stderr.write('stopping the demo\'s Placement\n')
