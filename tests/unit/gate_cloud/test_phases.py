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

"""The gate's phases without a cloud: what they read and how they judge.

The proof is ``python3 -m gate_cloud run`` itself; these check the parts
that decide its verdicts: reading Placement's access log and Keystone's
authentication record as the cloud writes them, comparing the tool's
queries with nova-scheduler's, judging an answer of ``candidates
--server``, the log-only lines, the least-privilege evidence, and the
token rate. Every check that should fail the gate is shown failing on the
evidence of the broken behaviour.
"""

import calendar
import json
import os
import subprocess
import sys

from oslo_config import cfg
import pytest

from gate_cloud import access_log
from gate_cloud import candidates
from gate_cloud import figures
from gate_cloud import inifile
from gate_cloud import keystone_audit
from gate_cloud import layout
from gate_cloud import log_only
from gate_cloud import privilege
from gate_cloud import reserved_ironic
from gate_cloud.services import ironic
from gate_cloud.services import ironic_compute
from gate_cloud.services import nova_compute
from gate_cloud.services import nova_scheduler
from gate_cloud.services import reporters
from image_type_filter import conf as itf_conf
from image_type_filter.scheduler import log_only as product_log_only
from virt_capabilities import conf as vc_conf

CREDS = {'admin_password': 'a', 'service_password': 's', 'db_user': 'gate',
         'db_password': 'd', 'rabbit_user': 'gate', 'rabbit_password': 'r',
         'erlang_cookie': 'c'}
#: A query as Placement's access log has it: a qcow2 boot, the libvirt
#: host's compute service disabled.
ISSUE_QUERY = ('/allocation_candidates?limit=1000&resources=DISK_GB%3A1%2C'
               'MEMORY_MB%3A128%2CVCPU%3A1&root_required=COMPUTE_IMAGE_TYPE_'
               'QCOW2%2COWNER_NOVA%2C%21COMPUTE_STATUS_DISABLED%2C'
               '%21CUSTOM_TROVE')
BOOT_ID = 'req-8c1d1f0e-2b9b-4f0e-8c7a-6f1e2d3c4b5a'
AGENT = 'nova-scheduler keystoneauth1/5.18.1 python-requests/2.34.2'


def access_line(method, target, status=200, agent=AGENT, request_id='-',
                user='-', roles='-'):
    """A line as gunicorn writes wsgi_server.ACCESS_FORMAT."""
    return ('[26/Nov/2026:07:12:01 +0000] "%s %s HTTP/1.1" %d 0.012 "%s" '
            '%s user=%s roles=%s\n' % (method, target, status, agent,
                                       request_id, user, roles))


# -- Placement's access log ---------------------------------------------------

def test_an_access_line_is_read_whole():
    r = access_log.parse(access_line(
        'GET', ISSUE_QUERY, request_id=BOOT_ID,
        user='nova-scheduler-placement', roles='service'))
    assert r.method == 'GET' and r.path == '/allocation_candidates'
    assert r.query.startswith('limit=1000&resources=')
    assert r.request_id == BOOT_ID and r.status == 200
    assert r.user == 'nova-scheduler-placement'
    assert r.roles == {'service'}
    several = access_log.parse(access_line('GET', '/', roles='admin,reader'))
    assert several.roles == {'admin', 'reader'}
    assert access_log.parse(access_line('GET', '/')).roles == frozenset()
    assert access_log.parse('not a line of ours\n') is None


def test_a_boots_queries_are_those_under_its_request_id(tmp_path):
    log = tmp_path / 'placement-access.log'
    log.write_text(''.join([
        access_line('GET', ISSUE_QUERY, request_id='req-other'),
        access_line('GET', ISSUE_QUERY, request_id=BOOT_ID),
        access_line('GET', '/resource_providers', request_id=BOOT_ID),
        access_line('GET', ISSUE_QUERY + '&x=1', request_id=BOOT_ID),
    ]))
    requests = access_log.since('placement', 0, log=log)
    assert access_log.candidate_queries(requests, BOOT_ID) == [
        ISSUE_QUERY, ISSUE_QUERY + '&x=1']
    # From a mark on, the lines before are not read again.
    later = access_log.since('placement', 2, log=log)
    assert access_log.candidate_queries(later, BOOT_ID) == [
        ISSUE_QUERY + '&x=1']


# -- the same query, order and encoding aside ---------------------------------

def test_the_same_query_in_another_order_and_encoding_is_the_same():
    reordered = ('/allocation_candidates?root_required=!CUSTOM_TROVE,'
                 '!COMPUTE_STATUS_DISABLED,OWNER_NOVA,COMPUTE_IMAGE_TYPE_QCOW2'
                 '&resources=VCPU:1,MEMORY_MB:128,DISK_GB:1&limit=1000')
    assert candidates.same_query(ISSUE_QUERY, reordered)


@pytest.mark.parametrize('other', [
    ISSUE_QUERY.replace('%2C%21CUSTOM_TROVE', ''),          # a trait fewer
    ISSUE_QUERY.replace('%21CUSTOM_TROVE', 'CUSTOM_TROVE'),  # not forbidden
    ISSUE_QUERY.replace('MEMORY_MB%3A128', 'MEMORY_MB%3A256'),
    ISSUE_QUERY.replace('limit=1000&', ''),
    ISSUE_QUERY + '&member_of=in:a,b',
])
def test_a_query_that_differs_in_any_term_differs(other):
    assert not candidates.same_query(ISSUE_QUERY, other)


def test_member_of_keeps_its_prefix_and_is_compared_as_a_set():
    assert candidates.same_query('member_of=in:a,b', 'member_of=in%3Ab%2Ca')
    assert not candidates.same_query('member_of=in:a,b', 'member_of=!in:a,b')
    assert candidates.traits_of(ISSUE_QUERY) == {
        'COMPUTE_IMAGE_TYPE_QCOW2', 'OWNER_NOVA', 'COMPUTE_STATUS_DISABLED',
        'CUSTOM_TROVE'}


# -- judging an answer of candidates --server ---------------------------------

DISABLED_HOST = 'vm'


def answer(queries=(ISSUE_QUERY,), hosts=(), release=34, no_valid_host=None):
    return {'queries': list(queries), 'nova': {'release': release},
            'hosts': [dict(zip(('name', 'result', 'reasons'), h, strict=True))
                      for h in hosts], 'no_valid_host': no_valid_host}


def server(status='ACTIVE', node='fake-raw', fault=None):
    out = {'id': 's1', 'status': status,
           'OS-EXT-SRV-ATTR:hypervisor_hostname': node}
    if fault:
        out['fault'] = {'message': fault}
    return out


NVH = 'No valid host was found. '
NVH_EXPECT = candidates.Expect(
    'ERROR', queries=1,
    causes={DISABLED_HOST: ('!COMPUTE_STATUS_DISABLED', 'gate-maint')},
    other_causes=('COMPUTE_IMAGE_TYPE_QCOW2', 'resources '))
NVH_HOSTS = (
    (DISABLED_HOST, 'excluded', ['!COMPUTE_STATUS_DISABLED: the compute '
                                 'service is disabled (gate-maint)']),
    ('fake-raw', 'excluded', ['COMPUTE_IMAGE_TYPE_QCOW2: it boots raw']),
)


def test_a_right_answer_for_an_active_server_holds():
    assert candidates.check(
        candidates.Expect('ACTIVE', queries=1, hosts={'fake-raw'}),
        server(), [ISSUE_QUERY], 0,
        answer(hosts=[('fake-raw', 'current host, fits', [])]), 34) == []


def test_a_right_answer_for_no_valid_host_holds():
    assert candidates.check(NVH_EXPECT, server('ERROR', None, NVH),
                            [ISSUE_QUERY], 3, answer(hosts=NVH_HOSTS),
                            34) == []


@pytest.mark.parametrize('what, args', [
    ('a query fewer', dict(ours=())),
    ('another query', dict(ours=(ISSUE_QUERY.replace('%21CUSTOM', 'CUSTOM'),
                                 ))),
    ('another release', dict(release=33)),
    ('the host not offered', dict(result='excluded')),
    ('exit 3 for a placed server', dict(code=3)),
    ('landed elsewhere than built for', dict(node='fake-trove')),
])
def test_a_wrong_answer_for_an_active_server_is_named(what, args):
    node = args.get('node', 'fake-raw')
    found = candidates.check(
        candidates.Expect('ACTIVE', queries=1, hosts={'fake-raw'}),
        server(node=node), [ISSUE_QUERY], args.get('code', 0),
        answer(queries=args.get('ours', (ISSUE_QUERY,)),
               hosts=[(node, args.get('result', 'current host, fits'), [])],
               release=args.get('release', 34)), 34)
    assert found, what


def test_no_owner_nova_from_a_nova_34_scheduler_is_named():
    query = ISSUE_QUERY.replace('%2COWNER_NOVA', '')
    found = candidates.check(candidates.Expect('ACTIVE'), server(), [query],
                             0, answer(queries=[query], hosts=[
                                 ('fake-raw', 'candidate', [])]), 34)
    assert any('OWNER_NOVA' in p for p in found)
    assert candidates.check(candidates.Expect('ACTIVE'), server(), [query],
                            0, answer(queries=[query], release=33, hosts=[
                                ('fake-raw', 'candidate', [])]), 33) == []


@pytest.mark.parametrize('what, code, hosts', [
    ('exit 0', 0, NVH_HOSTS),
    ('a host offered', 3, NVH_HOSTS[:1] + (('fake-raw', 'candidate', []),)),
    ('the disabled host not named for it', 3,
     ((DISABLED_HOST, 'excluded', ['resources VCPU']),) + NVH_HOSTS[1:]),
    ('another host with no cause built for', 3,
     NVH_HOSTS + (('fake-noraw', 'excluded', ['aggregate']),)),
])
def test_a_wrong_no_valid_host_answer_is_named(what, code, hosts):
    assert candidates.check(NVH_EXPECT, server('ERROR', None, NVH),
                            [ISSUE_QUERY], code, answer(hosts=hosts), 34), \
        what


def test_a_refusal_before_placement_has_no_query_and_names_the_format():
    expect = candidates.Expect('ERROR', queries=0, no_valid_host=('vmdk',))
    said = ('a request filter fails the request before Placement is asked: '
            'No compute host boots vmdk images (COMPUTE_IMAGE_TYPE_VMDK)')
    assert candidates.check(expect, server('ERROR', None, NVH), [], 3,
                            answer(queries=(), no_valid_host=said), 34) == []
    assert candidates.check(expect, server('ERROR', None, NVH), [], 3,
                            answer(queries=(), no_valid_host='none'), 34)
    assert candidates.check(expect, server('ERROR', None, NVH),
                            [ISSUE_QUERY], 3,
                            answer(queries=(), no_valid_host=said), 34)


def test_a_missing_answer_is_named():
    assert candidates.check(candidates.Expect('ACTIVE'), server(),
                            [ISSUE_QUERY], 2, None, 34)


# -- the reserved ironic node -------------------------------------------------

NODE = ironic.NODES[ironic.RESERVED_NODE]
TRAITS = '/resource_providers/%s/traits' % NODE


def test_nova_computes_refreshes_and_pushes_are_its_users_reads_and_writes():
    requests = [access_log.parse(line) for line in [
        access_line('GET', TRAITS, user='nova', roles='admin,service'),
        access_line('PUT', TRAITS, user='nova', roles='admin,service'),
        access_line('GET', TRAITS, user='admin', roles='admin'),
        access_line('GET', TRAITS.replace(NODE, 'other'), user='nova'),
        access_line('PUT', TRAITS, user=ironic_compute.REPORTER_USER,
                    roles='service'),
    ]]
    assert len(reserved_ironic.refreshes(requests, NODE)) == 1
    assert [r.method for r in reserved_ironic.trait_writes(
        requests, NODE, 'nova')] == ['PUT']
    assert len(reserved_ironic.trait_writes(
        requests, NODE, ironic_compute.REPORTER_USER)) == 1


def test_the_ironic_compute_and_its_reporter_read_as_meant(tmp_path):
    """nova.conf as Nova's ironic driver and the reporter read it; the
    reporter's own file after it leaves it its own user, for Ironic and
    Placement both."""
    nova_conf = tmp_path / 'nova.conf'
    inifile.write_conf(nova_conf, ironic_compute.conf(CREDS))
    own = tmp_path / 'reporter.conf'
    inifile.write_conf(own, ironic_compute.reporter_conf(CREDS))
    conf = cfg.ConfigOpts()
    vc_conf.register_opts(conf)
    # Nova's own (nova/conf/compute.py), which the reporter does not read.
    conf.register_opt(cfg.IntOpt('update_resources_interval'))
    conf.register_opt(cfg.IntOpt('resource_provider_association_refresh'),
                      group='compute')
    conf([], project='nova', default_config_files=[str(nova_conf),
                                                   str(own)])
    assert conf.compute_driver == 'ironic.IronicDriver'
    assert conf.compute.resource_provider_association_refresh == \
        ironic_compute.ASSOCIATION_REFRESH
    assert conf.update_resources_interval == ironic_compute.UPDATE_INTERVAL
    assert conf.virt_capabilities.custom_traits == [layout.RESERVED_TRAIT]
    from keystoneauth1 import loading
    for group in ('ironic', 'placement'):
        loading.register_auth_conf_options(conf, group)
        loading.load_auth_from_conf_options(conf, group)
        assert conf[group].username == ironic_compute.REPORTER_USER
    # nova-compute alone reads nova.conf: its own user there.
    alone = cfg.ConfigOpts()
    vc_conf.register_opts(alone)
    alone([], project='nova', default_config_files=[str(nova_conf)])
    loading.load_auth_from_conf_options(alone, 'ironic')
    assert alone.ironic.username == 'nova'


@pytest.mark.parametrize('host', [c['host'] for c in nova_compute.COMPUTES])
def test_each_reporter_reads_its_own_user_after_nova_conf(tmp_path, host):
    from keystoneauth1 import loading
    nova_conf = tmp_path / 'nova.conf'
    rec = dict([c for c in nova_compute.COMPUTES if c['host'] == host][0],
               nova_conf=str(nova_conf))
    inifile.write_conf(nova_conf, nova_compute.conf(CREDS, rec, '/v'))
    own = tmp_path / 'reporter.conf'
    inifile.write_conf(own, reporters.conf(CREDS, host))
    conf = cfg.ConfigOpts()
    vc_conf.register_opts(conf)
    conf([], project='nova', default_config_files=[str(nova_conf),
                                                   str(own)])
    loading.load_auth_from_conf_options(conf, 'placement')
    assert conf.placement.username == reporters.user(host)
    assert reporters.USERS[reporters.user(host)] == ('service',)


# -- log-only -----------------------------------------------------------------

def test_log_only_scheduler_conf_as_nova_reads_it(tmp_path):
    path = tmp_path / 'nova.conf'
    inifile.write_conf(path, nova_scheduler.conf(CREDS, enforce=False))
    conf = cfg.ConfigOpts()
    itf_conf.register_nova_opts(conf)
    conf([], project='nova', default_config_files=[str(path)])
    assert conf.image_type_filter.enforce is False
    assert conf.image_isolation.enabled is True
    on = tmp_path / 'on.conf'
    inifile.write_conf(on, nova_scheduler.conf(CREDS))
    conf = cfg.ConfigOpts()
    itf_conf.register_nova_opts(conf)
    conf([], project='nova', default_config_files=[str(on)])
    assert conf.image_type_filter.enforce is True


def test_a_refusal_is_expected_from_placements_traits_alone():
    carried = {'COMPUTE_IMAGE_TYPE_RAW', 'COMPUTE_IMAGE_TYPE_QCOW2',
               'COMPUTE_STORAGE_BUS_SCSI'}
    assert not log_only.refused('raw', {}, carried)
    assert log_only.refused('vmdk', {}, carried)
    assert log_only.refused('raw', {'hw_disk_bus': 'xen'}, carried)
    assert not log_only.refused('qcow2', {'hw_disk_bus': 'scsi'}, carried)


class _Outcome:
    def __init__(self, refusal=None, added=None):
        self.refusal, self.added = refusal, added or {}


def test_the_lines_the_filters_write_are_read_per_server():
    """The lines as the product writes them (its own line functions), in
    oslo.log's format, two servers mixed."""
    add = product_log_only.boot_line('s1', _Outcome(added={
        'root_required': ['COMPUTE_IMAGE_TYPE_RAW'],
        'root_forbidden': ['CUSTOM_TROVE']}))
    refuse = product_log_only.boot_line('s2', _Outcome(
        refusal='No compute host boots vmdk images'))
    lines = ['2026-11-26 07:12:01.123 4242 INFO image_type_filter.x '
             '[req-1 - - - - -] %s' % text for text in (add, refuse)]
    lines.append('2026-11-26 07:12:02.001 4242 INFO nova.scheduler '
                 '[req-2 - - - - -] server s3: would refuse nothing')
    # Read as the phase reads them: by the product's own module, in an
    # interpreter that has it (nova-scheduler's; this test's here).
    read = log_only.read_verdicts(sys.executable, lines)
    assert read.about('s1') == [
        ('would add', 'root_required=COMPUTE_IMAGE_TYPE_RAW '
                      'root_forbidden=CUSTOM_TROVE')]
    assert read.about('s2')[0][0] == 'would refuse'
    assert read.about('s3') == []
    assert read.refusals() == [read.lines[1]]
    assert log_only.added_constraints(read.about('s1')[0][1]) == {
            'root_required': {'COMPUTE_IMAGE_TYPE_RAW'},
            'root_forbidden': {'CUSTOM_TROVE'}}


def test_a_query_the_filters_changed_is_named():
    untouched = ('/allocation_candidates?limit=1000&resources=VCPU%3A1&'
                 'root_required=OWNER_NOVA%2C%21COMPUTE_STATUS_DISABLED')
    would = {'root_required': {'COMPUTE_IMAGE_TYPE_RAW', 'CUSTOM_TROVE'}}
    assert log_only.query_problems([untouched], would) == []
    assert log_only.query_problems([ISSUE_QUERY], {})
    forbids = untouched.replace('DISABLED', 'DISABLED%2C%21CUSTOM_TROVE')
    assert log_only.query_problems([forbids], {})
    bus = untouched + '&required=COMPUTE_STORAGE_BUS_XEN'
    assert log_only.query_problems([bus], {})
    # A trait the image itself asks for is Nova's (required, as the gate
    # cloud's log showed), no change; the same on the root would be ours.
    tagged = untouched + '&required=CUSTOM_TROVE'
    assert log_only.query_problems([tagged], would) == []
    rooted = untouched.replace('OWNER_NOVA', 'OWNER_NOVA%2CCUSTOM_TROVE')
    assert log_only.query_problems([rooted], would)


# -- least privilege ----------------------------------------------------------

def test_a_request_with_more_than_service_or_refused_is_named():
    user = reporters.user('fake-raw')
    fine = [access_log.parse(access_line('GET', TRAITS, user=user,
                                         roles='service'))]
    assert privilege.access_problems(fine, {user: True}) == []
    admin = [access_log.parse(access_line('GET', TRAITS, user=user,
                                          roles='admin,service'))]
    assert privilege.access_problems(admin, {user: True})
    refused = [access_log.parse(access_line('PUT', TRAITS, 403, user=user,
                                            roles='reader'))]
    assert len(privilege.access_problems(refused, {user: True})) == 2
    assert privilege.access_problems([], {user: True})
    assert privilege.access_problems([], {user: False}) == []


def test_the_schedulers_own_user_must_have_asked_and_made_the_traits():
    user = nova_scheduler.PLACEMENT_USER
    both = [access_log.parse(line) for line in [
        access_line('GET', ISSUE_QUERY, user=user, roles='service'),
        access_line('PUT', '/traits/CUSTOM_TROVE', 204, user=user,
                    roles='service')]]
    assert privilege.scheduler_problems(both) == []
    assert len(privilege.scheduler_problems(both[:1])) == 1
    assert len(privilege.scheduler_problems([])) == 2


def authentication(user, success=True, agent='virt-capabilities ks'):
    return keystone_audit.Authentication(user, success, 0.0, agent)


def test_each_user_must_authenticate_by_its_program_and_never_fail():
    user = reporters.user('fake-raw')
    users = {user: 'virt-capabilities'}
    assert privilege.audit_problems([authentication(user)], users) == []
    assert privilege.audit_problems([], users)
    assert privilege.audit_problems(
        [authentication(user), authentication(user, False)], users)
    assert privilege.audit_problems(
        [authentication(user, agent='nova-compute keystoneauth1')], users)


def test_status_must_refuse_a_reader_in_one_line_naming_the_role():
    table = (0, json.dumps([{'check': 'x', 'result': 'Success'}]), '')
    reader = (2, '', 'image-type-filter status: could not check: Placement '
                     'refused GET /resource_providers (403): the Keystone '
                     'user needs the service role (or admin) in its '
                     'project\n')
    assert privilege.status_problems(table, reader) == []
    # A failed check is exit 2 with its table: the checks ran.
    failed = (2, json.dumps([{'check': 'x', 'result': 'Failure'}]), '')
    assert privilege.status_problems(failed, reader) == []
    assert privilege.status_problems((2, '', 'refused\n'), reader)
    assert privilege.status_problems((2, '', reader[2]), reader)
    assert privilege.status_problems(table, (2, table[1], reader[2]))
    assert privilege.status_problems(table, (1, '', reader[2]))
    assert privilege.status_problems(table, (2, '', reader[2] * 2))
    assert privilege.status_problems(table, (2, '', 'could not check: '
                                                    '403\n'))


def test_a_log_saying_needs_the_service_role_is_found(tmp_path):
    (tmp_path / 'a.log').write_text('fine\n')
    (tmp_path / 'sub').mkdir()
    (tmp_path / 'sub' / 'b.log').write_text(
        'Placement refused GET (403): the Keystone user needs the service '
        'role (or admin) in its project\n')
    assert privilege.logs_saying('needs the service role', tmp_path) == [
        str(tmp_path / 'sub' / 'b.log')]


def test_every_service_only_user_is_declared_with_service_alone():
    from gate_cloud import cloud
    declared = {}
    for svc in cloud.SERVICES:
        declared.update(getattr(svc, 'USERS', {}))
    for user in privilege.service_users():
        assert declared[user] == ('service',), user


# -- Keystone's record of authentications, and the token rate -----------------

#: A line as Keystone 30 writes a CADF authenticate event through
#: oslo.messaging's log driver (shape as logged in the gate cloud).
AUDIT_LINE = (
    '2026-11-26 07:12:01.126 4242 INFO oslo.messaging.notification.identity'
    '.authenticate [None req-1 - - - - - -] {"message_id": "m1", '
    '"publisher_id": "identity.vm", "event_type": "identity.authenticate", '
    '"priority": "INFO", "payload": {"typeURI": "http://schemas.dmtf.org/'
    'cloud/audit/1.0/event", "eventType": "activity", "id": "e1", '
    '"eventTime": "2026-11-26T07:12:01.123456+0000", "action": '
    '"authenticate", "outcome": "success", "observer": {"typeURI": '
    '"service/security", "id": "o1"}, "initiator": {"typeURI": '
    '"service/security/account/user", "host": {"address": "127.0.0.1", '
    '"agent": "virt-capabilities keystoneauth1/5.18.1 python-requests/'
    '2.34.2 CPython/3.11.2"}, "user_id": "u1", "id": "i1", "name": '
    '"virt-capabilities-fake-raw", "username": "virt-capabilities-fake-raw"'
    '}, "target": {"typeURI": "service/security/account/user", "id": "t1"}'
    ', "requestPath": "/v3/auth/tokens"}, "timestamp": '
    '"2026-11-26 07:12:01.124000"}\n')


def test_an_authentication_is_read_from_keystones_log(tmp_path):
    log = tmp_path / 'keystone-app.log'
    log.write_text('2026-11-26 07:12:00.000 4242 INFO keystone.x [-] other\n'
                   + AUDIT_LINE + AUDIT_LINE.replace('"success"',
                                                     '"failure"'))
    found = keystone_audit.read(log)
    assert [a.success for a in found] == [True, False]
    assert found[0].user == 'virt-capabilities-fake-raw'
    assert found[0].program == 'virt-capabilities'
    assert found[0].at == pytest.approx(
        calendar.timegm((2026, 11, 26, 7, 12, 1, 0, 0, 0)) + 0.123456)
    assert keystone_audit.by_user(found) == {
        'virt-capabilities-fake-raw': [found[0].at]}


def test_the_steady_rate_counts_renewals_of_the_running_process_only():
    lifetime, interval = 600, 10
    renewal = lifetime - 120 + 5
    started = {'r1': 1000.0, 'r2': 5000.0}
    tokens = {'r1': [1001.0, 1001.0 + renewal, 1001.0 + 2 * renewal],
              # a token of r2's process before this one: not counted
              'r2': [10.0, 5001.0, 5001.0 + renewal]}
    steady = figures.steady_token_rate(tokens, started, lifetime, interval)
    assert steady['renewals'] == 3
    assert steady['per_hour'] == pytest.approx(3600.0 / renewal, abs=0.01)
    assert steady['too_soon'] == []
    # A token per cycle is far more than one per lifetime: named.
    chatty = {'r1': [1001.0 + n * interval for n in range(10)]}
    assert figures.steady_token_rate(chatty, started, lifetime,
                                     interval)['too_soon'] == ['r1']
    # No renewal yet: no rate, and the figures say the run was too short.
    young = figures.steady_token_rate({'r1': [1001.0]}, started, lifetime,
                                      interval)
    assert young['per_hour'] is None
    assert figures.problems({'reporter_tokens': young})
    assert figures.problems({'reporter_tokens': figures.steady_token_rate(
        chatty, started, lifetime, interval)})
    assert figures.problems({'reporter_tokens': steady}) == []


def test_the_phases_modules_import_without_the_clouds_libraries():
    """``python3 -m gate_cloud`` runs from a bare python3: nothing the
    phases import may need the cloud's virtualenv."""
    bare = os.path.join(sys.base_prefix, 'bin', 'python3')
    code = ('import sys; sys.path.insert(0, %r); '
            'import gate_cloud.runner' % str(layout.REPO))
    subprocess.run([bare, '-I', '-c', code], check=True, timeout=60)
