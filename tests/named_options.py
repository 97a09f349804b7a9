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

"""The options of Nova and of the other services this project's text names.

``tests/repository/test_cross_references.py`` holds every option the
docs, help texts and generated configs name to this project's
``list_opts`` and to these tables; the Nova suite holds ``NOVA`` to the
installed Nova. Kept apart from both so that the Nova suite loads nothing
of the demo.
"""

#: Nova's options (nova/conf/ and oslo.log's, Nova 34.0.0) that this
#: project's text names and its list_opts do not register (those it reads
#: from nova.conf, ``compute_driver`` and the like, it registers itself).
#: tests/nova/test_gate_cloud_options.py checks each against the installed
#: Nova.
NOVA = {
    'DEFAULT': {'log_file', 'my_ip', 'update_resources_interval'},
    'database': {'connection'},
    'compute': {'provider_config_location',
                'resource_provider_association_refresh'},
    'filter_scheduler': {'available_filters', 'enabled_filters',
                         'pci_in_placement'},
    'scheduler': {'enable_isolated_aggregate_filtering',
                  'limit_tenants_to_placement_aggregate',
                  'max_placement_results',
                  'query_placement_for_routed_network_aggregates'},
    'service_user': {'send_service_user_token'},
    'upgrade_levels': {'compute'},
    'workarounds': {'disable_fallback_pcpu_query'},
    'wsgi': {'api_paste_config'},
}
#: Options of the other services and tools this project configures or
#: tells operators about, which the tests cannot load: (group, option) ->
#: whose.
OTHERS = {
    ('DEFAULT', 'output_file'): 'oslo-config-generator',
    ('DEFAULT', 'wrap_width'): 'oslo-config-generator',
    ('DEFAULT', 'namespace'): 'oslo-config-generator',
    ('api', 'auth_strategy'): 'Placement (placement.conf)',
    ('compute', 'flavor_ref_alt'): 'tempest (tempest.conf)',
    ('DEFAULT', 'rbac_service_role_elevated_access'): 'Ironic (ironic.conf)',
    ('DEFAULT', 'transport_url'): 'oslo.messaging (nova.conf)',
    ('compute', 'image_ref'): 'tempest (tempest.conf)',
    ('compute', 'min_compute_nodes'): 'tempest (tempest.conf)',
    ('image_format', 'disk_formats'): 'Glance (glance-api.conf)',
    ('oslo_policy', 'enforce_scope'): 'oslo.policy (every service)',
    ('placement', 'max_microversion'): 'tempest (tempest.conf)',
    ('token', 'expiration'): 'Keystone (keystone.conf)',
    ('fleet_driver', 'node_count'): 'the fleet benchmark\'s scale driver '
                                    '(benchmarks/fleet/scale_driver.py)',
}
