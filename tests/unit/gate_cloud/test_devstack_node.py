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

"""What the devstack phases read on the node: the queries of Placement's
request log in the journal (lines as devstack's Placement writes them),
and the order the job runs them in."""

import pytest

from gate_cloud import devstack_candidates as candidates
from gate_cloud import devstack_job
from gate_cloud import devstack_node as node

QUERY = ('/placement/allocation_candidates?limit=1000&resources=DISK_GB%3A1'
         '%2CMEMORY_MB%3A192%2CVCPU%3A1&root_required=COMPUTE_IMAGE_TYPE_RAW'
         '%2COWNER_NOVA%2C%21COMPUTE_STATUS_DISABLED')
OURS = 'req-434accb2-349b-448d-9a60-0b8b406b555a'
OTHER = 'req-0f3e5a4c-1b2d-4e6f-8a9b-0c1d2e3f4a5b'
STARTING = (7, 'DEBUG placement.requestlog [%s req-fa4d9472 None None] '
               'Starting request: 10.254.253.2 "GET %s"')
ANSWERED = (6, 'INFO placement.requestlog [%s req-fa4d9472 service nova] '
               '10.254.253.2 "GET %s" status: 200 len: 979 microversion: '
               '1.36')


def test_the_queries_answered_under_the_boots_request_id():
    records = [(STARTING[0], STARTING[1] % (OURS, QUERY)),
               (ANSWERED[0], ANSWERED[1] % (OURS, QUERY)),
               (ANSWERED[0], ANSWERED[1] % (OTHER, QUERY + '%2CX')),
               (ANSWERED[0], ANSWERED[1] % (
                   OURS, '/placement/resource_providers/u/traits'))]
    # Once per query (its "Starting request" line is not an answer), and
    # only this boot's.
    assert node.logged_queries(records, OURS) == [QUERY]
    assert candidates.same_query(
        node.logged_queries(records, OURS)[0],
        'resources=VCPU:1,MEMORY_MB:192,DISK_GB:1&limit=1000&root_required='
        '!COMPUTE_STATUS_DISABLED,OWNER_NOVA,COMPUTE_IMAGE_TYPE_RAW')


def test_devstacks_colours_are_taken_off_journal_lines():
    coloured = '\x1b[01;35m10.254.253.2 "GET %s" status: 200\x1b[00m' % QUERY
    assert node.ANSI.sub('', coloured) == \
        '10.254.253.2 "GET %s" status: 200' % QUERY


def test_the_job_runs_its_phases_on_the_node_in_order():
    assert devstack_job.PHASES == (
        ('candidates', 'gate_cloud.devstack_candidates'),
        ('log-only', 'gate_cloud.devstack_log_only'),
        ('privilege', 'gate_cloud.devstack_privilege'),
        ('faults', 'gate_cloud.devstack_faults'),
        ('figures', 'gate_cloud.devstack_figures'))


@pytest.mark.parametrize('lines, expected', [
    ('', set()),
    ('[image_isolation]\nrules = CUSTOM_TROVE\n', set()),
    ('[image_isolation]\nenabled = True\nrules = CUSTOM_TROVE, '
     'os_distro=windows:CUSTOM_WIN,hw_x:CUSTOM_X\n',
     {'CUSTOM_TROVE', 'CUSTOM_WIN', 'CUSTOM_X'}),
])
def test_the_reserved_traits_come_from_enabled_isolation_rules(
        tmp_path, lines, expected):
    conf = tmp_path / 'nova.conf'
    # nova.conf repeats available_filters: read as Nova reads it.
    conf.write_text('[filter_scheduler]\navailable_filters = a\n'
                    'available_filters = b\n' + lines)
    assert node.isolation_traits(conf) == expected


def test_set_aside_touches_only_the_nodes_lacking_the_trait(monkeypatch,
                                                            capsys):
    calls = []

    class Cloud:
        def all_traits(self):
            return {'n1': ['COMPUTE_IMAGE_TYPE_RAW'],
                    'n2': ['COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_TROVE'],
                    'n3': ['COMPUTE_NODE']}

        def set_compute_service(self, host, enabled, reason=None):
            calls.append((host, enabled, reason))

    monkeypatch.setattr(node, 'Cloud', Cloud)
    node.set_aside('COMPUTE_IMAGE_TYPE_RAW', False)
    assert calls == [('n3', False, node.SET_ASIDE_REASON)]
    assert capsys.readouterr().out.strip() == 'n3'
    node.set_aside('COMPUTE_IMAGE_TYPE_RAW', True)
    assert calls[-1] == ('n3', True, None)


def test_a_cloud_that_does_not_answer_is_a_gate_error(tmp_path,
                                                       monkeypatch):
    """The phases catch GateError (a boot refused while a part is down):
    openstacksdk's and keystoneauth's failures come out as one, naming
    the call."""
    import socket

    sock = socket.socket()  # a loopback port nothing listens on
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    clouds = tmp_path / 'clouds.yaml'
    clouds.write_text(
        'clouds:\n  %s:\n    auth:\n      auth_url: http://127.0.0.1:%d/'
        'identity\n      username: admin\n      password: secret\n'
        '      project_name: admin\n      user_domain_id: default\n'
        '      project_domain_id: default\n' % (node.CLOUD, port))
    monkeypatch.setenv('OS_CLIENT_CONFIG_FILE', str(clouds))
    with pytest.raises(node.GateError) as exc:
        node.Cloud().compute('GET', '/servers')
    assert str(exc.value).startswith('GET compute /servers: ')
    assert 'secret' not in str(exc.value)


class LostDeleteNova:
    """nova-api's side of a delete whose cast to nova-compute was lost:
    the server stays in task_state ``deleting``, and nova-api ignores
    every later delete of a server in that state (Nova's
    ``compute.api.API._delete``), until ``os-resetState`` clears it."""

    def __init__(self):
        self.task_state = None
        self.calls = []

    def __call__(self, method, path, body=None):
        self.calls.append((method, path))
        assert len(self.calls) < 20, 'deletes asked again, all ignored'
        if self.task_state == 'gone':
            raise node.HTTPError(method, path, 404, 'not found')
        if method == 'DELETE':
            # The first cast is lost; one sent after a reset arrives.
            self.task_state = ('gone' if ('POST', path + '/action')
                               in self.calls else 'deleting')
        elif method == 'POST':
            assert body == {'os-resetState': {'state': 'error'}}
            self.task_state = None
        return 200, {}, {'server': {'status': 'ERROR',
                                    'OS-EXT-STS:task_state':
                                    self.task_state}}


def test_a_delete_nova_lost_is_reset_and_sent_again(monkeypatch, capsys):
    """Asking again is not enough (Nova ignores it); the gate's cleanup
    resets the server's state first, as an operator would."""
    nova = LostDeleteNova()
    cloud = node.Cloud.__new__(node.Cloud)
    monkeypatch.setattr(cloud, 'compute', nova, raising=False)
    monkeypatch.setattr(node, 'RE_DELETE', 0)
    cloud.delete('s1', deadline=3600)
    assert nova.calls == [('DELETE', '/servers/s1'), ('GET', '/servers/s1'),
                          ('POST', '/servers/s1/action'),
                          ('DELETE', '/servers/s1'), ('GET', '/servers/s1')]
    assert 'still deleting' in capsys.readouterr().out


def test_a_server_that_will_not_go_is_a_gate_error_naming_its_state(
        monkeypatch):
    cloud = node.Cloud.__new__(node.Cloud)
    monkeypatch.setattr(cloud, 'compute', lambda *a: (
        200, {}, {'server': {'status': 'BUILD',
                             'OS-EXT-STS:task_state': 'spawning'}}),
        raising=False)
    monkeypatch.setattr(node, 'RE_DELETE', 0)
    with pytest.raises(node.GateError, match=r'not deleted after 0 s '
                       r'\(BUILD, task spawning\)'):
        cloud.delete('s1', deadline=0)
