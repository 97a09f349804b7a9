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

"""nova-conductor, one worker."""

from gate_cloud import inifile
from gate_cloud import processes
from gate_cloud.services import nova

NAME = 'nova-conductor'
PORTS = {}
DEBIAN = ()
PYPI = nova.PYPI
#: nova-api made the schemas; its API says when the conductor is up.
NEEDS = ('rabbitmq', 'keystone', 'nova-api')
USERS = nova.USERS


def conf_path():
    return nova.conf_path('conductor')


def conf(creds):
    return inifile.merge(nova.common(creds, 'conductor'),
                         {'conductor': {'workers': '1'}})


def configure(cloud):
    inifile.write_conf(conf_path(), conf(cloud.creds))
    nova.make_state('conductor')


def start(cloud):
    nova.start_service(cloud, NAME, NAME, 'nova-conductor', conf_path())


def wait(cloud):
    nova.wait_reported(cloud, NAME, 'nova-conductor')


def stop(cloud):
    processes.stop(NAME)
