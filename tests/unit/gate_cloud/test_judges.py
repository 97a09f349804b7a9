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

"""The gate's judges without a cloud: comparing the tool's queries with
nova-scheduler's, judging an answer of ``candidates --server``, the
log-only lines and queries, and ``status`` under least privilege. Every
check that should fail the gate is shown failing on the evidence of the
broken behaviour."""

import json
import os
import subprocess
import sys

import pytest

from gate_cloud import devstack_candidates as candidates
from gate_cloud import devstack_log_only as log_only
from gate_cloud import devstack_privilege
from image_type_filter.scheduler import log_only as product_log_only

#: A query as Placement's request log has it: a qcow2 boot, the raw
#: host's compute service disabled.
ISSUE_QUERY = ('/allocation_candidates?limit=1000&resources=DISK_GB%3A1%2C'
               'MEMORY_MB%3A128%2CVCPU%3A1&root_required=COMPUTE_IMAGE_TYPE_'
               'QCOW2%2COWNER_NOVA%2C%21COMPUTE_STATUS_DISABLED%2C'
               '%21CUSTOM_TROVE')

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


# -- the log-only lines and queries ------------------------------------------

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
    assert log_only.query_problems([forbids], {}, {'CUSTOM_TROVE'})
    bus = untouched + '&required=COMPUTE_STORAGE_BUS_XEN'
    assert log_only.query_problems([bus], {})
    # A trait the image itself asks for is Nova's (required, as the gate
    # cloud's log showed), no change; the same on the root would be ours.
    tagged = untouched + '&required=CUSTOM_TROVE'
    assert log_only.query_problems([tagged], would) == []
    rooted = untouched.replace('OWNER_NOVA', 'OWNER_NOVA%2CCUSTOM_TROVE')
    assert log_only.query_problems([rooted], would)


# -- status under least privilege --------------------------------------------

def test_status_must_refuse_a_reader_in_one_line_naming_the_role():
    table = (0, json.dumps([{'check': 'x', 'result': 'Success'}]), '')
    reader = (2, '', 'image-type-filter status: could not check: Placement '
                     'refused GET /resource_providers (403): the Keystone '
                     'user needs the service role (or admin) in its '
                     'project\n')
    assert devstack_privilege.status_problems(table, reader) == []
    # A failed check is exit 2 with its table: the checks ran.
    failed = (2, json.dumps([{'check': 'x', 'result': 'Failure'}]), '')
    assert devstack_privilege.status_problems(failed, reader) == []
    assert devstack_privilege.status_problems((2, '', 'refused\n'), reader)
    assert devstack_privilege.status_problems((2, '', reader[2]), reader)
    assert devstack_privilege.status_problems(table, (2, table[1], reader[2]))
    assert devstack_privilege.status_problems(table, (1, '', reader[2]))
    assert devstack_privilege.status_problems(table, (2, '', reader[2] * 2))
    assert devstack_privilege.status_problems(
        table, (2, '', 'could not check: 403\n'))


def test_a_forbidden_reserved_trait_is_named_only_for_the_reserved():
    """Isolation is log-only too: a reserved trait forbidden in a query
    is the filters' doing; another forbidden trait is not."""
    forbids = ('/allocation_candidates?resources=VCPU%3A1&root_required='
               'OWNER_NOVA%2C%21CUSTOM_TROVE')
    assert log_only.query_problems([forbids], {}, {'CUSTOM_TROVE'})
    assert log_only.query_problems([forbids], {}, {'CUSTOM_OTHER'}) == []


def test_the_gates_modules_import_from_a_bare_python():
    """``python3 -m gate_cloud`` and the phases run from a bare python3
    (the host's, the node's): nothing they import may need a virtualenv."""
    bare = os.path.join(sys.base_prefix, 'bin', 'python3')
    repo = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))))
    names = sorted(n[:-3] for n in os.listdir(os.path.join(repo,
                                                           'gate_cloud'))
                   if n.endswith('.py') and not n.startswith('__'))
    code = ('import sys; sys.path.insert(0, %r); ' % repo + '; '.join(
        'import gate_cloud.%s' % n for n in names if n != 'localconf'))
    subprocess.run([bare, '-I', '-c', code], check=True, timeout=60)
