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

"""The services' config files, as dicts of sections rendered to INI.

A value that is a list is written as the same key repeated (oslo.config's
MultiStrOpt, e.g. ``available_filters``). Nothing here writes a file; the
tests parse what it renders with oslo.config as Nova does.
"""

from gate_cloud import layout

#: README's "Running inside Nova" block, with isolation and one
#: image-metadata family: what nova-scheduler runs with the filters on.
FILTERS_ON = {
    'filter_scheduler': {
        'available_filters': ['nova.scheduler.filters.all_filters',
                              'image_type_filter.nova.all_filters'],
        'enabled_filters': ','.join((
            'ComputeFilter', 'ComputeCapabilitiesFilter',
            'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
            'ServerGroupAffinityFilter', 'ImageTypeRebuildFilter')),
    },
    'scheduler': {
        'filter_hosts_by_image_type_support': 'True',
        'image_type_unknown_format': 'ignore',
    },
    'image_isolation': {'enabled': 'True', 'rules': layout.RESERVED_TRAIT},
    'image_metadata_prefilter': {'families': layout.IMAGE_METADATA_FAMILY},
}

#: Nova's own scheduler and nothing of ours.
FILTERS_OFF = {
    'filter_scheduler': {
        'available_filters': ['nova.scheduler.filters.all_filters'],
        'enabled_filters': ','.join((
            'ComputeFilter', 'ComputeCapabilitiesFilter',
            'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
            'ServerGroupAffinityFilter')),
    },
    'scheduler': {},
}


def render(sections):
    lines = []
    for section, options in sections.items():
        lines.append('[%s]' % section)
        for key, value in options.items():
            for one in value if isinstance(value, list) else [value]:
                lines.append('%s = %s' % (key, one))
        lines.append('')
    return '\n'.join(lines)


def merge(*parts):
    out = {}
    for part in parts:
        for section, options in part.items():
            out.setdefault(section, {}).update(options)
    return out


def db_url(name, creds):
    return 'mysql+pymysql://%s:%s@%s:%d/%s?charset=utf8' % (
        creds['db_user'], creds['db_password'], layout.HOST,
        layout.PORTS['mariadb'], name)


def transport_url(creds):
    return 'rabbit://%s:%s@%s:%d/' % (
        creds['rabbit_user'], creds['rabbit_password'], layout.HOST,
        layout.PORTS['rabbitmq'])


def password_auth(username, password, extra=None):
    section = {
        'auth_type': 'password',
        'auth_url': layout.AUTH_URL,
        'username': username,
        'password': password,
        'user_domain_name': 'Default',
        'project_name': 'service',
        'project_domain_name': 'Default',
        'region_name': layout.REGION,
    }
    section.update(extra or {})
    return section


def keystone_authtoken(creds, user):
    auth = password_auth(user, creds['service_password'])
    del auth['region_name']
    auth.update({'www_authenticate_uri': layout.AUTH_URL,
                 'memcached_servers': '', 'service_token_roles_required':
                 'True', 'http_connect_timeout': '10'})
    return auth


def keystone_conf(creds):
    return {
        'DEFAULT': {'log_file': str(layout.path('logs', 'keystone-app.log')),
                    'debug': 'False'},
        'database': {'connection': db_url('keystone', creds)},
        'token': {'provider': 'fernet'},
        'fernet_tokens': {'key_repository': str(layout.path('keystone',
                                                            'fernet-keys'))},
        'fernet_receipts': {'key_repository': str(
            layout.path('keystone', 'fernet-keys'))},
        'credential': {'key_repository': str(layout.path('keystone',
                                                         'credential-keys'))},
    }


def placement_conf(creds):
    return {
        'DEFAULT': {'log_file': str(layout.path('logs',
                                                'placement-app.log'))},
        'api': {'auth_strategy': 'keystone'},
        'placement_database': {'connection': db_url('placement', creds)},
        'keystone_authtoken': keystone_authtoken(creds, 'placement'),
    }


def glance_conf(creds):
    images = layout.path('glance')
    return {
        'DEFAULT': {
            'log_file': str(layout.path('logs', 'glance-app.log')),
            'enabled_backends': 'fs:file',
            'bind_host': layout.HOST,
            'bind_port': str(layout.PORTS['glance']),
            'workers': '1',
        },
        'glance_store': {'default_backend': 'fs'},
        'fs': {'filesystem_store_datadir': str(images / 'images')},
        'os_glance_staging_store': {
            'filesystem_store_datadir': str(images / 'staging')},
        'os_glance_tasks_store': {
            'filesystem_store_datadir': str(images / 'tasks')},
        'database': {'connection': db_url('glance', creds)},
        'keystone_authtoken': keystone_authtoken(creds, 'glance'),
        'paste_deploy': {'flavor': 'keystone'},
        'oslo_concurrency': {'lock_path': str(images / 'locks')},
    }


def nova_common(creds, name):
    """What every Nova process shares; ``name`` picks its log and state."""
    state = layout.path('nova', name)
    return {
        'DEFAULT': {
            'transport_url': transport_url(creds),
            'state_path': str(state),
            'log_file': str(layout.path('logs', 'nova-%s-app.log' % name)),
            'heal_instance_info_cache_interval': '-1',
            'my_ip': layout.HOST,
        },
        'api_database': {'connection': db_url('nova_api', creds)},
        'database': {'connection': db_url('nova_cell0', creds)
                     if name == 'cell0' else db_url('nova', creds)},
        'keystone_authtoken': keystone_authtoken(creds, 'nova'),
        'placement': password_auth('nova', creds['service_password']),
        'neutron': password_auth('nova', creds['service_password'],
                                 {'endpoint_override':
                                  layout.ENDPOINTS['network'],
                                  'timeout': '30'}),
        'glance': {'endpoint_override': layout.ENDPOINTS['image'],
                   'region_name': layout.REGION},
        'oslo_concurrency': {'lock_path': str(state / 'locks')},
        'vnc': {'enabled': 'False'},
        'api': {'auth_strategy': 'keystone'},
        'wsgi': {'api_paste_config': str(layout.path('nova',
                                                     'api-paste.ini'))},
        'oslo_messaging_rabbit': {'heartbeat_timeout_threshold': '30'},
    }


def _clean(sections):
    """Drop None values (placeholders in the common block)."""
    return {s: {k: v for k, v in o.items() if v is not None}
            for s, o in sections.items()}


def nova_api_conf(creds):
    return _clean(nova_common(creds, 'api'))


def nova_conductor_conf(creds):
    return _clean(merge(nova_common(creds, 'conductor'),
                        {'conductor': {'workers': '1'}}))


def nova_scheduler_conf(creds, filters_on=True):
    return _clean(merge(
        nova_common(creds, 'scheduler'),
        # debug: the tempest plugin tells the workers apart by the pid on
        # the log lines that carry a boot's request id.
        {'DEFAULT': {'debug': 'True'},
         'scheduler': {'workers': str(layout.SCHEDULER_WORKERS),
                       'discover_hosts_in_cells_interval': '-1'}},
        FILTERS_ON if filters_on else FILTERS_OFF))


def _privsep(helper):
    return {'helper_command': helper}


def nova_compute_conf(creds, compute):
    """A compute node's nova.conf; the reporter beside it reads it too."""
    name = compute['host']
    conf = merge(nova_common(creds, 'compute-' + name), {
        'DEFAULT': {'host': name, 'compute_driver': compute['driver']},
        'compute': {},
        'virt_capabilities': {
            # The production setting: nova-compute keeps the image-type
            # traits, the reporter its custom ones.
            'image_type_traits_owner': 'nova-compute',
        },
    })
    if compute.get('exclude'):
        conf['compute']['image_type_exclude_list'] = ','.join(
            compute['exclude'])
    if compute.get('custom_traits'):
        conf['virt_capabilities']['custom_traits'] = ','.join(
            compute['custom_traits'])
    if compute['driver'] == 'libvirt.LibvirtDriver':
        conf_path = compute['nova_conf']
        helper = '%s --config-file %s' % (layout.venv_bin('privsep-helper'),
                                          conf_path)
        conf['libvirt'] = {
            'virt_type': compute.get('virt_type', 'qemu'),
            'cpu_mode': 'none',
            'images_type': 'qcow2',
            'connection_uri': 'qemu+unix:///system?socket=%s'
                              % layout.path('libvirt', 'run', 'libvirt-sock'),
        }
        conf['DEFAULT']['instances_path'] = str(
            layout.path('nova', 'compute-' + name, 'instances'))
        # The guests boot empty disks: no OS answers ACPI, so a clean
        # shutdown (a rebuild's first step) would wait Nova's default 60 s
        # for nothing before powering off.
        conf['DEFAULT']['shutdown_timeout'] = '0'
        for section in ('nova_sys_admin', 'privsep_osbrick',
                        'vif_plug_ovs_privileged',
                        'vif_plug_linux_bridge_privileged', 'privsep'):
            conf[section] = _privsep(helper)
    return _clean(conf)
