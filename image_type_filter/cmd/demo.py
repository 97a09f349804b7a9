"""``image-type-filter demo``: the whole story on an embedded Placement."""

import logging

from cliff import command

from image_type_filter.cmd import common
from image_type_filter.harness import demo


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
        return parser

    def take_action(self, parsed_args):
        if self.app.options.verbose_level <= 1 and not self.app.options.debug:
            # The fleet's own reporter lines would bury the result.
            logging.getLogger('virt_capabilities').setLevel(logging.WARNING)
        result = demo.run(progress_stream=self.app.stderr)
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
        return 0
