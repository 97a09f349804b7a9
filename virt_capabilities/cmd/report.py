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

"""``virt-capabilities report``: sync the traits, once or as a service."""

import functools
import math
import time

from cliff import lister

from image_type_common import exceptions
from image_type_common.cli import arguments
from image_type_common.cli import column_types
from image_type_common.cli import roles
from virt_capabilities import providers
from virt_capabilities import service

#: Shorter would only load Placement: a node's traits change with its
#: nova.conf, which changes rarely.
MIN_INTERVAL = 1.0
#: One day: a longer interval is a typo (1e10 s is 300 years).
MAX_INTERVAL = 86400.0
#: What --os-cloud reaches besides Placement (report and remove).
IRONIC_CLOUD = ' (an ironic node\'s reporter: Ironic, instead of [ironic])'
#: The rule doc/source/install/compute.rst explains ("The provider, as
#: Nova names it").
PROVIDER_HELP = (
    'Resource provider to keep in sync (repeatable). Default: the one '
    'nova-compute uses: the uuid in its compute_id file (beside a '
    '--config-file, else in [DEFAULT] state_path), else the node name the '
    'driver gives (libvirt: this machine\'s host name, by libvirt\'s '
    'getHostname() rule, not [DEFAULT] host; the fake driver: [DEFAULT] '
    'host); VMware, ironic and z/VM need this option. Ironic: an Ironic '
    'node\'s uuid or name; the reporter '
    'keeps its traits on that node, and nova-compute copies them to its '
    'provider.')


def add_node_arguments(parser, provider_help=PROVIDER_HELP, cloud=True):
    """The node's arguments every command takes: its nova.conf, its
    providers and (report, remove) the cloud that reaches them."""
    arguments.add_config_argument(parser)
    if cloud:
        arguments.add_cloud_argument(parser, IRONIC_CLOUD)
    parser.add_argument('--provider', action='append', default=[],
                        metavar='NAME_OR_UUID', help=provider_help)


#: What --dry-run lists: the provider as given (or found in nova.conf),
#: its uuid, and the traits a sync would add and remove.
COLUMNS = ('provider', 'uuid', 'add', 'remove')
#: --check and --dry-run: a provider differs from what this node should
#: carry (1 and 2 keep their meanings).
DRIFT = 3


class Report(lister.Lister):
    """Keep this node's own traits on its resource provider in Placement.

    Owned: the configured custom traits, the driver's image-metadata traits
    nova-compute never writes and, with image_type_traits_owner =
    reporter, the COMPUTE_IMAGE_TYPE_* traits (by default nova-compute
    keeps those); every other trait on the provider stays as it was.
    One-shot by default;
    with --interval it runs as a service: SIGHUP re-reads the config, SIGTERM
    stops at once (a provider's write under way, and the record of it,
    finish first), leaving nothing half-written, and exits 0; credentials
    Keystone or Placement refuse are retried with back-off, the config
    re-read before each try. A sync prints no result (its log says what
    changed) and records it in the status file ([virt_capabilities]
    status_file) for monitoring. --dry-run lists, per provider, what a
    sync would add and remove, in any -f format; --check compares and
    prints one line, for a monitoring check or cron. Neither writes
    anything.

    Exit codes: 0 in sync; 1 Placement error after retries, traits
    Placement lacks, a provider not found, or a state or status file that
    cannot be saved (as a service: an ERROR each cycle until it can); 2
    bad configuration or usage, or credentials refused (as a service:
    retried); 3 (--check, --dry-run) a provider differs from what this
    node should carry.
    """

    _epilog = roles.epilog('virt-capabilities', 'report')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_node_arguments(parser)
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
            help='Read each provider and list what a sync would add and '
                 'remove (-f table, json, yaml, value or csv); write '
                 'nothing. Exit code 3 if a sync would change something.')
        parser.add_argument(
            '--check', action='store_true',
            help='Compare each provider with what this node should carry and '
                 'print one line; change nothing. Exit code 0 in sync, 3 if '
                 'a provider differs (1 and 2 as for a sync): a monitoring '
                 'check or a cron job.')
        # No default: -f and -c are refused where nothing would be listed.
        parser.set_defaults(formatter=None)
        return parser

    def run(self, parsed_args):
        self.check_arguments(parsed_args)
        job_factory = functools.partial(self.new_job, parsed_args)
        if parsed_args.interval:
            return service.run_service(job_factory, parsed_args.interval,
                                       parsed_args.wait, self.app.control)
        if not (parsed_args.check or parsed_args.dry_run):
            return service.run_once(job_factory, parsed_args.wait)
        if parsed_args.check:
            self.take_action(parsed_args)
            self.app.stdout.write(self.check_line() + '\n')
        else:
            parsed_args.formatter = (parsed_args.formatter
                                     or self.formatter_default)
            super().run(parsed_args)  # take_action's rows, through -f
        if self.job.missing:
            self.app.LOG.error('%s; the others were read',
                               providers.missing_line(self.job.kind,
                                                      self.job.missing))
            return 1
        return DRIFT if self.drift else 0

    def check_line(self):
        """--check's one line: in sync, or which providers differ and
        how; the exit code says the same."""
        if not self.drift:
            return 'in sync: %d %s(s) carry what this node should' % (
                len(self.rows), self.job.kind)
        return 'drift: %d of %d %s(s) differ from what this node should ' \
            'carry: %s' % (len(self.drift), len(self.rows), self.job.kind,
                           '; '.join('%s (%s) add %s, remove %s' % (
                               ref.value, uuid, ','.join(added) or '-',
                               ','.join(removed) or '-')
                               for ref, uuid, added, removed in self.drift))

    def check_arguments(self, parsed_args):
        if parsed_args.interval is not None and not (
                math.isfinite(parsed_args.interval)
                and MIN_INTERVAL <= parsed_args.interval <= MAX_INTERVAL):
            raise exceptions.ConfigError(
                '--interval must be a number of seconds from %g to %g'
                % (MIN_INTERVAL, MAX_INTERVAL))
        if not (math.isfinite(parsed_args.wait) and parsed_args.wait >= 0):
            raise exceptions.ConfigError(
                '--wait must be a number of seconds, 0 or more')
        chosen = [name for name in ('--dry-run', '--check', '--interval')
                  if getattr(parsed_args, name[2:].replace('-', '_'))
                  not in (None, False)]
        if len(chosen) > 1:
            raise exceptions.ConfigError(
                '%s do not go together' % ' and '.join(chosen))
        if not parsed_args.dry_run and (parsed_args.formatter
                                        or parsed_args.columns):
            raise exceptions.ConfigError(
                '-f and -c go with --dry-run: %s' % (
                    '--check prints one line' if parsed_args.check
                    else 'a sync lists nothing'))

    def new_job(self, parsed_args, sleep=time.sleep):
        return service.ReportJob(parsed_args.config_file,
                                 parsed_args.provider, parsed_args.os_cloud,
                                 sleep=sleep,
                                 config_dirs=parsed_args.config_dir)

    def take_action(self, parsed_args):
        """The dry run (and --check's): one row per provider found, what a
        sync would add and remove there."""
        self.job = self.new_job(parsed_args)
        self.rows = self.job.dry_run(parsed_args.wait)
        self.drift = [row for row in self.rows if row[2] or row[3]]
        return COLUMNS, [
            (ref.value, uuid, column_types.ListColumn(added),
             column_types.ListColumn(removed))
            for ref, uuid, added, removed in self.rows]
