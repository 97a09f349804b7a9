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

"""The trait reporters: ``virt-capabilities report`` beside each
nova-compute, from that compute's own nova.conf (its ``[placement]``
password auth, its log options) and, read after it, a file of its own
(``reporter-<host>.conf``) naming its own Keystone user, with the
``service`` role alone in project ``service``: least privilege, what
Placement's default policy asks of traits reads and writes."""

from gate_cloud import inifile
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud.services import nova
from gate_cloud.services import nova_compute

NAME = 'reporters'
PORTS = {}
DEBIAN = ()
#: virt-capabilities comes from this project, installed editable into
#: every series' virtualenv (``gate_cloud.series.EDITABLE``).
PYPI = ()
NEEDS = ('nova-compute',)
#: The reporters' --interval, seconds.
INTERVAL = 10
#: How long a reporter waits at start for its compute's provider.
PROVIDER_WAIT = 300


def process_name(host):
    return 'reporter-' + host


def series_key(cloud, host):
    """The series map's key for one reporter: its own entry if it has one
    (moved with its compute in an upgrade), else the service's."""
    own = process_name(host)
    return own if own in cloud.series else NAME


def user(host):
    """The Keystone user of the reporter beside compute ``host``."""
    return 'virt-capabilities-' + host


#: Each reporter's own user: ``service`` alone.
USERS = {user(c['host']): ('service',) for c in nova_compute.COMPUTES}


def conf_path(host):
    return nova.conf_path('reporter-' + host)


def conf(creds, host):
    """reporter-<host>.conf: read after the compute's nova.conf (later
    files win), so only its user differs from nova-compute's."""
    return {'placement': {'username': user(host),
                          'password': creds['service_password']}}


def configure(cloud, hosts=None):
    for c in nova_compute.records():
        if hosts is None or c['host'] in hosts:
            inifile.write_conf(conf_path(c['host']),
                               conf(cloud.creds, c['host']))


def start(cloud, hosts=None):
    for c in nova_compute.records():
        if hosts is None or c['host'] in hosts:
            key = series_key(cloud, c['host'])
            processes.start(process_name(c['host']), [
                cloud.bin(key, 'virt-capabilities'), 'report',
                '--config-file', c['nova_conf'],
                '--config-file', conf_path(c['host']), '--wait',
                str(PROVIDER_WAIT), '--interval', str(INTERVAL)],
                env=cloud.env(key), log=c['reporter_log'])


def wait(cloud, hosts=None):
    """Every provider carries what it should: the reserved trait where set
    (by its reporter), image types (by nova-compute), none missing."""
    computes = nova_compute.records()

    def probe():
        traits = rest.all_traits(cloud.admin)
        for c in computes:
            have = set(traits.get(c['provider'], ()))
            if not set(c['custom_traits']) <= have:
                return False
            if c['driver'] == nova_compute.LIBVIRT and \
                    'COMPUTE_IMAGE_TYPE_QCOW2' not in have:
                return False
        return True
    processes.wait_for('reporters setting %s' % layout.RESERVED_TRAIT, probe,
                       log=layout.path('logs'))


def stop(cloud, hosts=None):
    processes.stop_many(process_name(c['host'])
                        for c in nova_compute.records()
                        if hosts is None or c['host'] in hosts)
