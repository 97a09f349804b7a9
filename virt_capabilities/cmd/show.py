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

"""``virt-capabilities show``: exactly what ``report`` would keep, offline."""

from cliff import show

from image_type_common.cli import column_types
from image_type_common.cli import roles
from virt_capabilities import plan
from virt_capabilities.cmd import report


class Show(show.ShowOne):
    """Show who keeps which trait on this node's provider, and why.

    The dry run of report's decisions, so that a node can be checked
    before the reporter runs there: the same validation of the node's
    configuration (a configuration or state file report refuses, show
    refuses with the same message and exit code 2) and the same traits.
    Three refusals of report's are not show's, as they matter only to a
    sync: how Placement (or Ironic) is reached (credentials, endpoints,
    TLS files: show reads none), no provider found from nova.conf
    (VMware, ironic and z/VM without --provider), and a log
    destination nova.conf names that cannot be opened (show logs to
    stderr); show exits 0 on them, and says the second in provider_needed.
    nova_compute_keeps: the COMPUTE_IMAGE_TYPE_* traits
    nova-compute reports itself for this driver and options (by default,
    image_type_traits_owner = nova-compute, the reporter never touches
    them). reporter_keeps: every trait report keeps: its custom traits, the
    image-metadata traits the driver boots and nova-compute never writes
    (image_metadata_traits lists them by family) and, with
    image_type_traits_owner = reporter, the image-type traits. why: one
    sentence per kind. Lists and why are data in json and yaml. Reads the
    config files, the compute_id file and the state file (only to refuse
    one that is not the reporter's) and, for libvirt, this machine's host
    name and architecture; asks neither Placement nor Ironic.
    report --dry-run also reads the provider and shows what a sync would
    change.
    """

    _epilog = roles.epilog('virt-capabilities', 'show')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        report.add_node_arguments(parser, cloud=False)
        return parser

    def take_action(self, parsed_args):
        node = plan.NodePlan.from_files(
            parsed_args.config_file, parsed_args.provider,
            parsed_args.config_dir)
        result = columns(node)  # in the order shown
        return tuple(result), tuple(_column(value, parsed_args.formatter)
                                    for value in result.values())


def _column(value, formatter):
    """Lists and mappings as text or data; nothing as nothing (never
    ``None`` in text)."""
    if value is None:
        return column_types.MissingColumn(formatter)
    if isinstance(value, column_types.TextDict):
        return column_types.DataColumn(value)
    if isinstance(value, list):
        return column_types.ListColumn(value)
    return value


def columns(node):
    """Every column of ``node`` (a NodePlan), by name. Those that are data,
    not prose, in json and yaml: ``image_metadata_traits`` as {family:
    [trait, ...]}, ``why`` as {kind of trait: sentence}, ``providers`` as
    [{kind, value, source}], and ``provider_needed``: why none could be
    found from nova.conf (null when one was)."""
    families = {}
    for row in sorted(node.metadata_rows, key=lambda r: (r.family, r.trait)):
        families.setdefault(row.family,
                            column_types.TextList()).append(row.trait)
    providers = column_types.TextList(
        column_types.TextDict({'kind': 'uuid' if ref.is_uuid else 'name',
                               'value': ref.value, 'source': ref.source},
                              text=ref.describe())
        for ref in node.refs)
    why = node.why()
    return {
        'compute_driver': node.capabilities.compute_driver,
        'formats': sorted(node.capabilities.formats),
        'excluded': sorted(node.capabilities.excluded),
        'image_type_traits_owner': node.settings.image_type_traits_owner,
        'nova_compute_keeps': sorted(node.nova_compute_traits),
        'reporter_keeps': sorted(node.traits),
        'custom_traits': sorted(node.custom_traits),
        'image_metadata_traits': column_types.TextDict(families),
        # One line per kind in a table, which stays readable.
        'why': column_types.TextDict(why, text='\n'.join(
            '%s: %s' % kv for kv in why.items())),
        'providers': providers,
        'provider_needed': (str(node.provider_needed)
                            if node.provider_needed else None),
        'reporter_name': node.settings.reporter_name,
    }
