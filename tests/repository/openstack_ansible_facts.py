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

"""What OpenStack-Ansible's os_nova role has, read from its source.

Read with the search tool's ``fetch`` from openstack/openstack-ansible-
os_nova at commit ``OS_NOVA_COMMIT`` (its master branch on 2026-06-26; the
role is not on the package index), from openstack/openstack-ansible at
``OPENSTACK_ANSIBLE_COMMIT`` and from openstack/ansible-config_template at
``CONFIG_TEMPLATE_COMMIT`` (2026-03-12). Names and behaviours only, each
with the file it comes from; no code of theirs is copied here.
``doc/source/install/openstack-ansible.rst`` may use only these.
"""

OS_NOVA_COMMIT = 'e06c7bceef3f7c365828116b7aadea6fc2d3e22b'
#: openstack/openstack-ansible (2026-07-16): inventory/group_vars/all/all.yml
#: sets venv_tag to openstack_release; playbooks/os-nova-install.yml
#: imports the playbook openstack.osa.nova; inventory/env.d/nova.yml has
#: the nova_compute group.
OPENSTACK_ANSIBLE_COMMIT = 'ff0803744ab500e08e3f6b61a586dbc19cc4e821'
CONFIG_TEMPLATE_COMMIT = '01b297af6dce36755b81124343d054ebf7f7bf8c'

#: Variables of defaults/main.yml the recipe sets or reads, with what the
#: role does with them.
VARIABLES = {
    # default []; vars/main.yml: nova_venv_packages is nova_pip_packages
    # united with it, computed per host; tasks/nova_install.yml installs
    # that list into the nova venv (python_venv_build) with
    # venv_build_constraints = nova_git_constraints.
    'nova_user_pip_packages': [],
    # default {}; tasks/nova_post_install.yml: config_overrides of the
    # config_template task that writes nova.conf (config_type ini), on
    # every nova host.
    'nova_nova_conf_overrides': {},
    # default []; vars/main.yml _nova_scheduler_filters: the default list,
    # then nova_blazar_scheduler_filters when Blazar is on, then this;
    # templates/nova.conf.j2 writes it, joined by commas, as
    # [filter_scheduler] enabled_filters on nova_scheduler hosts.
    'nova_scheduler_extra_filters': [],
    'nova_scheduler_default_filters': [
        'ComputeFilter', 'AggregateNumInstancesFilter',
        'AggregateIoOpsFilter', 'ComputeCapabilitiesFilter',
        'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
        'ServerGroupAffinityFilter', 'NUMATopologyFilter'],
    # "{{ venv_tag | default('untagged') }}"
    'nova_venv_tag': None,
    # "{{ _nova_bin }}"; vars/source_install.yml:
    # _nova_bin = /openstack/venvs/nova-{{ nova_venv_tag }}/bin
    'nova_bin': None,
    'nova_system_user_name': 'nova',
    'nova_system_home_folder': '/var/lib/nova',
    # default [BlazarFilter], appended when nova_blazar_enabled; with it,
    # templates/nova.conf.j2 also writes two available_filters lines
    # (nova.scheduler.filters.all_filters and Blazar's).
    'nova_blazar_scheduler_filters': ['BlazarFilter'],
}
#: The venv's bin directory for a venv tag (vars/source_install.yml).
NOVA_BIN = '/openstack/venvs/nova-%s/bin'
#: nova_services' inventory groups (defaults/main.yml).
GROUPS = {'nova-compute': 'nova_compute', 'nova-scheduler': 'nova_scheduler'}
#: templates/nova.conf.j2 [DEFAULT] on every host: use_journal = True and
#: state_path = nova_system_home_folder; nova-compute runs as the systemd
#: unit nova-compute.service (defaults/main.yml nova_services).
NOVA_CONF_DEFAULTS = {'use_journal': 'True', 'state_path': '/var/lib/nova'}
NOVA_COMPUTE_UNIT = 'nova-compute.service'
#: The config file the role writes: nova_conf_version_dir/nova.conf, for
#: source installs the venv's etc/nova, which /etc/nova links to
#: (tasks/nova_pre_install.yml: "the config directory is a link"), owner
#: root, group nova, mode 0640 (tasks/nova_post_install.yml).
NOVA_CONF = '/etc/nova/nova.conf'

#: ansible-config_template, plugins/action/config_template.py (the same
#: in ansible-config-template 2.1.1, the newest on the package index), for
#: an ini file: an override's key replaces every line of that key in the
#: template (remove_option, then set); a list value is written as one line,
#: its items joined by commas; a mapping whose values are all empty as one
#: line per key, sorted; any other value as str(value). The slow tier runs
#: 2.1.1 itself (tests/repository/test_openstack_ansible.py).
CONFIG_TEMPLATE_LIST_JOIN = ','
