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

"""What ``candidates`` knows of the cloud's nova-scheduler, and how.

- **Its options** come from the nova.conf given with ``--config-file`` (and
  ``--config-dir``): the ``[scheduler]`` and ``[filter_scheduler]`` options
  Nova's request filters read (``nova_request_filters.NOVA_OPTIONS``), and
  whether ``[filter_scheduler] available_filters`` loads this project's
  filters (``image_type_filter.nova.all_filters``). Without a file, Nova's
  defaults, and this project's filters not loaded; the output says which.
- **Its release** comes from the compute API's maximum microversion (the
  one nova-api publishes; the scheduler is assumed to run the same
  release): 2.100 is Nova 31 or 32, 2.103 Nova 33, 2.104 Nova 34. 31 and
  32 differ only in memory encryption (32 also requires the CPU trait of
  the model), and are built as 32. ``--nova-release`` overrides it.
- **OWNER_NOVA** (``owner_nova_filter``, Nova 34) is required once the
  lowest nova-compute service version in every cell is 73 or more, which
  no API shows. One sign is read instead: every compute node provider
  (``COMPUTE_NODE``) carries ``OWNER_NOVA``, which nova-compute 34 puts on
  the providers it creates. Some lack it: not required (an older
  nova-compute keeps the version low), and the output names them.
  ``--owner-nova required|not-required`` overrides the sign.
"""

from oslo_config import cfg

from image_type_common.conf import loading
from image_type_filter.client import nova_query
from image_type_filter.client import nova_request_filters as nova_filters

OUR_FILTERS = 'image_type_filter.nova.all_filters'
OWNER_NOVA = 'OWNER_NOVA'
AUTO, REQUIRED, NOT_REQUIRED = 'auto', 'required', 'not-required'

#: Compute API maximum microversion -> the Nova releases that publish it.
COMPUTE_API_RELEASES = (((2, 100), (31, 32)), ((2, 103), (33,)),
                        ((2, 104), (34,)))


def register_nova_options(conf):
    """Nova's own options the request filters read, with Nova's defaults,
    on a ConfigOpts of their own (never this project's)."""
    groups = {}
    for (group, name), default in nova_filters.NOVA_OPTIONS.items():
        opt = (cfg.IntOpt(name, default=default) if isinstance(default, int)
               and not isinstance(default, bool)
               else cfg.BoolOpt(name, default=default))
        groups.setdefault(group, []).append(opt)
    groups['filter_scheduler'].append(
        cfg.MultiStrOpt('available_filters', default=[
            'nova.scheduler.filters.all_filters']))
    for group, opts in groups.items():
        conf.register_opts(opts, group=group)


def read_options(config_files, config_dirs=()):
    """(options for nova_request_filters.Cloud, whether this project's
    filters are loaded, where it was read)."""
    if not config_files and not config_dirs:
        return dict(nova_filters.NOVA_OPTIONS), False, \
            'no nova.conf given: Nova\'s defaults'
    conf = loading.load(config_files, register_nova_options,
                        config_dirs=config_dirs)
    options = {(group, name): conf[group][name]
               for group, name in nova_filters.NOVA_OPTIONS}
    ours = OUR_FILTERS in conf.filter_scheduler.available_filters
    return options, ours, ', '.join(list(config_files) + list(config_dirs))


def release_for(max_version, override=None):
    """(release, how it is known) for the compute API's maximum
    microversion; ``override``: --nova-release."""
    if override is not None:
        return override, '--nova-release %d' % override
    shown = '%d.%d' % tuple(max_version)
    for last, releases in COMPUTE_API_RELEASES:
        if tuple(max_version) <= last:
            if tuple(max_version) < COMPUTE_API_RELEASES[0][0]:
                return nova_query.OLDEST, (
                    'compute API maximum microversion %s is older than Nova '
                    '%d: built as Nova %d, which may differ'
                    % (shown, nova_query.OLDEST, nova_query.OLDEST))
            release = releases[-1]
            if len(releases) > 1:
                return release, (
                    'compute API maximum microversion %s: Nova %s; built as '
                    'Nova %d (Nova %d differs only in memory encryption: '
                    '--nova-release %d)' % (
                        shown, ' or '.join(map(str, releases)), release,
                        releases[0], releases[0]))
            return release, 'compute API maximum microversion %s: Nova %d' \
                % (shown, release)
    return nova_query.NEWEST, (
        'compute API maximum microversion %s is newer than Nova %d: built '
        'as Nova %d, which may differ' % (shown, nova_query.NEWEST,
                                          nova_query.NEWEST))


def owner_nova(release, client, compute_nodes, override=AUTO):
    """(required?, why) for OWNER_NOVA. ``compute_nodes``: uuid -> name of
    the compute node providers (the survey's)."""
    if release < 34:
        return False, 'Nova %d has no owner_nova_filter' % release
    if override == REQUIRED:
        return True, '--owner-nova required'
    if override == NOT_REQUIRED:
        return False, '--owner-nova not-required'
    carrying = {rp['uuid'] for rp in
                client.list_resource_providers(required=OWNER_NOVA)}
    lacking = sorted(name for uuid, name in compute_nodes.items()
                     if uuid not in carrying)
    if not compute_nodes:
        return False, 'no compute node provider found'
    if lacking:
        return False, (
            '%d of %d compute node(s) lack OWNER_NOVA (%s): some nova-compute '
            'is older than service version 73, so nova-scheduler does not '
            'require it; if every nova-compute is at 73 or later it does, '
            'and leaves those out (--owner-nova required)'
            % (len(lacking), len(compute_nodes), ', '.join(lacking)))
    return True, ('every one of %d compute node(s) carries OWNER_NOVA, which '
                  'nova-compute puts on its providers from service version '
                  '73 (--owner-nova not-required if one is older)'
                  % len(compute_nodes))
