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

"""The devstack privilege phase: what it reads in Placement's request log
(lines as devstack's Placement writes them: project, then user)."""

from gate_cloud import devstack_privilege as privilege

LINE = ('INFO placement.requestlog [req-1 req-2 service %s] 10.254.253.2 '
        '"GET /placement/resource_providers/u/traits" status: %d len: 88 '
        'microversion: 1.39')


def test_the_service_only_users_requests_answered_pass():
    records = [(6, LINE % (privilege.SERVICE_ONLY, 200)),
               (6, LINE % ('nova', 403))]
    assert privilege.reporter_problems(records) == []


def test_a_refused_request_of_the_service_only_user_fails():
    records = [(6, LINE % (privilege.SERVICE_ONLY, 200)),
               (6, LINE % (privilege.SERVICE_ONLY, 403))]
    problems = privilege.reporter_problems(records)
    assert len(problems) == 1 and 'refused gate-service-only' in problems[0]


def test_no_request_of_the_service_only_user_fails():
    assert privilege.reporter_problems([(6, LINE % ('nova', 200))]) == [
        'Placement logged no request by gate-service-only']


def test_the_phase_s_reporter_is_not_the_node_s(tmp_path, monkeypatch):
    """The phase reports and removes with the node's reporter's nova.conf
    and a file of its own after it. A reporter is named after its host by
    default: under that name the phase's remove would take the node's
    reporter's records (and traits) as its own, and the faults phase
    after it saw them come back."""
    from virt_capabilities import conf as reporter_conf
    monkeypatch.setattr(privilege.shutil, 'chown', lambda *a: None)
    nova_conf = tmp_path / 'nova.conf'
    nova_conf.write_text('[DEFAULT]\nhost = itfgate1\n')
    mine = privilege.placement_as(str(tmp_path), privilege.SERVICE_ONLY,
                                  'secret', 'http://10.254.253.2/identity')
    node_s = reporter_conf.load([str(nova_conf)])
    phase_s = reporter_conf.load([str(nova_conf), mine])
    assert node_s.virt_capabilities.reporter_name == 'itfgate1'
    assert phase_s.virt_capabilities.reporter_name == privilege.SERVICE_ONLY
