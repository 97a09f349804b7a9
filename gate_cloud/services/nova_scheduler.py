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

"""nova-scheduler, two workers, with this project's filters on or off."""

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud.services import nova

NAME = 'nova-scheduler'
PORTS = {}
DEBIAN = ()
#: The filters come from this project, installed editable into every
#: series' virtualenv (``gate_cloud.series.EDITABLE``).
PYPI = nova.PYPI
NEEDS = ('rabbitmq', 'keystone', 'placement', 'nova-api')
#: Its [placement] user: the ``service`` role alone (least privilege: it
#: asks for allocation candidates and, at start, makes the reserved
#: CUSTOM_* traits; Placement's default policy gives both to ``service``).
PLACEMENT_USER = 'nova-scheduler-placement'
USERS = dict(nova.USERS, **{PLACEMENT_USER: ('service',)})
#: How many workers (two: the tempest plugin checks both run the filters).
WORKERS = 2

NOVA_FILTERS = ('ComputeFilter', 'ComputeCapabilitiesFilter',
                'ImagePropertiesFilter', 'ServerGroupAntiAffinityFilter',
                'ServerGroupAffinityFilter')

#: The install guide's block (doc/source/install/scheduler.rst, "On the
#: scheduler: inside Nova"), with isolation and one image-metadata family:
#: what nova-scheduler runs with the filters on.
FILTERS_ON = {
    'filter_scheduler': {
        'available_filters': ['nova.scheduler.filters.all_filters',
                              'image_type_filter.nova.all_filters'],
        'enabled_filters': ','.join(NOVA_FILTERS
                                    + ('ImageTypeRebuildFilter',)),
    },
    'scheduler': {'filter_hosts_by_image_type_support': 'True'},
    'image_type_filter': {'unknown_format': 'ignore'},
    'image_isolation': {'enabled': 'True', 'rules': layout.RESERVED_TRAIT},
    'image_metadata_prefilter': {'families': layout.IMAGE_METADATA_FAMILY},
}

#: The filters loaded but in log-only mode: they change no request and
#: log what they would do (the roll-out mode, ``log_only.py``'s phase).
LOG_ONLY = {'image_type_filter': {'enforce': 'False'}}

#: Nova's own scheduler and nothing of ours.
FILTERS_OFF = {
    'filter_scheduler': {
        'available_filters': ['nova.scheduler.filters.all_filters'],
        'enabled_filters': ','.join(NOVA_FILTERS),
    },
    'scheduler': {},
}


def conf_path():
    return nova.conf_path('scheduler')


def log_file():
    """oslo.log's file ([DEFAULT] log_file), where the request ids are."""
    return layout.path('logs', 'nova-scheduler-app.log')


#: Nova's own mechanism for each thing the filters do, where Nova has one:
#: what upgrade.rst's rollback turns on before the filters' lines go.
NOVA_MECHANISMS = {'scheduler': {
    # The image's disk_format as a required COMPUTE_IMAGE_TYPE_* trait.
    'query_placement_for_image_type_support': 'True',
    # Aggregates whose metadata requires a trait are forbidden to
    # requests that do not require it.
    'enable_isolated_aggregate_filtering': 'True',
    # hw_disk_bus and the other image properties Nova maps to traits.
    'image_metadata_prefilter': 'True',
}}


def rollback_conf(creds, filters_on, nova_mechanisms):
    """Its nova.conf at a step of upgrade.rst's rollback."""
    return conf(creds, filters_on,
                extra=NOVA_MECHANISMS if nova_mechanisms else None)


def conf(creds, filters_on=True, enforce=True, extra=None):
    """Its nova.conf: the filters on (enforcing, or with ``enforce``
    False in log-only mode) or off; ``extra``: sections merged last (the
    rollback's Nova options)."""
    return inifile.merge(
        nova.common(creds, 'scheduler'),
        # debug: the tempest plugin tells the workers apart by the pid on
        # the log lines that carry a boot's request id.
        {'DEFAULT': {'debug': 'True'},
         'scheduler': {'workers': str(WORKERS),
                       'discover_hosts_in_cells_interval': '-1'},
         'placement': {'username': PLACEMENT_USER}},
        FILTERS_ON if filters_on else FILTERS_OFF,
        LOG_ONLY if filters_on and not enforce else {}, extra or {})


def configure(cloud, filters_on=True, enforce=True):
    inifile.write_conf(conf_path(), conf(cloud.creds, filters_on, enforce))
    nova.make_state('scheduler')


def start(cloud):
    nova.start_service(cloud, NAME, NAME, 'nova-scheduler', conf_path())


def wait(cloud):
    """Until it reports in (after this start)."""
    nova.wait_reported(cloud, NAME, 'nova-scheduler')


def stop(cloud):
    processes.stop(NAME)


def set_filters(cloud, on, enforce=True):
    """Restart it with the filters switched on or off (or, on, in log-only
    mode)."""
    configure(cloud, filters_on=on, enforce=enforce)
    stop(cloud)
    start(cloud)
    wait(cloud)
