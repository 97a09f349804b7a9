"""``virt-capabilities report``: sync the traits, once or as a service."""

import functools
import math

from cliff import command

from image_type_common import cli
from image_type_common import exceptions
from virt_capabilities import service

#: Shorter would only load Placement: a node's traits change with its
#: nova.conf, which changes rarely.
MIN_INTERVAL = 1.0
#: One day: a longer interval is a typo (1e10 s is 300 years).
MAX_INTERVAL = 86400.0


class Report(command.Command):
    """Sync this node's COMPUTE_IMAGE_TYPE_* traits to Placement.

    Only the image-type traits (and configured custom traits) are owned;
    every other trait on the provider stays as it was. One-shot by default;
    with --interval it runs as a service: SIGHUP re-reads the config, SIGTERM
    stops at once, leaving nothing half-written, and exits 0.

    Exit codes: 0 in sync; 1 Placement error after retries, or traits
    Placement lacks; 2 bad configuration or usage.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        cli.add_config_argument(parser)
        cli.add_cloud_argument(parser)
        parser.add_argument(
            '--provider', action='append', default=[], metavar='NAME_OR_UUID',
            help='Resource provider to keep in sync (repeatable). Default: '
                 'the uuid in $state_path/compute_id, else [DEFAULT] host.')
        parser.add_argument(
            '--wait', type=float, default=0.0, metavar='SECONDS',
            help='Wait this long, with back-off, for the provider to appear '
                 'and Placement to answer (nova-compute may not have created '
                 'it yet at start-up). Default 0.')
        parser.add_argument(
            '--interval', type=float, metavar='SECONDS',
            help='Run as a service, syncing about every SECONDS (jittered).')
        parser.add_argument(
            '--dry-run', action='store_true',
            help='Read each provider and print what a sync would add and '
                 'remove; write nothing.')
        return parser

    def take_action(self, parsed_args):
        if parsed_args.interval is not None and not (
                math.isfinite(parsed_args.interval)
                and MIN_INTERVAL <= parsed_args.interval <= MAX_INTERVAL):
            raise exceptions.ConfigError(
                '--interval must be a number of seconds from %g to %g'
                % (MIN_INTERVAL, MAX_INTERVAL))
        if not (math.isfinite(parsed_args.wait) and parsed_args.wait >= 0):
            raise exceptions.ConfigError(
                '--wait must be a number of seconds, 0 or more')
        if parsed_args.dry_run:
            if parsed_args.interval is not None:
                raise exceptions.ConfigError(
                    '--dry-run and --interval do not go together')
            return self.dry_run(parsed_args)
        if parsed_args.interval:
            return service.run_service(
                lambda sleep: service.ReportJob(
                    parsed_args.config_file, parsed_args.provider,
                    parsed_args.os_cloud, sleep=sleep,
                    config_dirs=parsed_args.config_dir),
                parsed_args.interval, parsed_args.wait, self.app.control)
        return service.run_once(functools.partial(
            service.ReportJob, parsed_args.config_file, parsed_args.provider,
            parsed_args.os_cloud, config_dirs=parsed_args.config_dir),
            parsed_args.wait)

    def dry_run(self, parsed_args):
        job = service.ReportJob(parsed_args.config_file,
                                parsed_args.provider, parsed_args.os_cloud,
                                config_dirs=parsed_args.config_dir)
        for uuid, added, removed in job.dry_run(parsed_args.wait):
            self.app.stdout.write('%s add: %s remove: %s\n' % (
                uuid, ','.join(added) or '-', ','.join(removed) or '-'))
        for ref in job.missing:
            self.app.stdout.write('%s not found\n' % ref.describe())
        return 1 if job.missing else 0
