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

"""Host verdicts for nova-scheduler's query, against a real Placement.

Hosts are built by hand in the session's Placement (fresh names), each
left out by one term of the query (a query string written as Nova's
``ResourceRequest.to_querystring`` writes it); Placement answers the very
query, and every host must be named with the term that left it out, the
server's own host judged with its allocation given back, and a fitting
host cut by ``limit`` said to be so.
"""

from urllib import parse
import uuid

import pytest

from image_type_common import placement_client
from image_type_filter.diagnostics import survey as survey_mod
from image_type_filter.diagnostics import verdicts
from placement_runner import writes

INVENTORY = {'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 100}}
RAW = 'COMPUTE_IMAGE_TYPE_RAW'


def _host(client, name, traits, aggregates=()):
    rp = writes.create_resource_provider(client, name)
    generation = writes.put_inventories(client, rp['uuid'], rp['generation'],
                                        INVENTORY)['resource_provider_'
                                                   'generation']
    generation = client.put_provider_traits(
        rp['uuid'], ['COMPUTE_NODE'] + list(traits), generation)
    if aggregates:
        client.request('PUT', '/resource_providers/%s/aggregates'
                       % rp['uuid'], {'aggregates': list(aggregates),
                                      'resource_provider_generation':
                                      generation})
    return rp['uuid']


@pytest.fixture(scope='module')
def fleet(sqlite_placement):
    """Five hosts of this module's own in the session's Placement."""
    client = sqlite_placement.client()
    tag = uuid.uuid4().hex[:8]
    aggregate = str(uuid.uuid4())
    hosts = {
        'fits': _host(client, 'fits-' + tag, [RAW], [aggregate]),
        'disabled': _host(client, 'disabled-' + tag,
                          [RAW, 'COMPUTE_STATUS_DISABLED']),
        'no-raw': _host(client, 'noraw-' + tag, []),
        'full': _host(client, 'full-' + tag, [RAW]),
        'fits-too': _host(client, 'fitstoo-' + tag, [RAW]),
    }
    server = str(uuid.uuid4())
    writes.put_allocations(client, server, {
        'allocations': {hosts['full']: {'resources': {'VCPU': 4}}},
        'project_id': str(uuid.uuid4()), 'user_id': str(uuid.uuid4()),
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    survey = survey_mod.Survey(
        {u: survey_mod.Host(u, name, {'raw'} if name not in ('no-raw',)
                            else set()) for name, u in hosts.items()})
    return client, hosts, survey, aggregate, server


def _query(limit=1000, aggregates=(), resources='DISK_GB:10,MEMORY_MB:512,'
           'VCPU:2', extra=()):
    """A query string as Nova writes it for a flavor of 2 VCPUs, 512 MB
    and 10 GB booting a raw image, the compute service enabled."""
    params = [('limit', str(limit))] if limit else []
    params += [('resources', resources), *extra]
    params += [('member_of', 'in:' + a) for a in aggregates]
    params += [('root_required', '%s,!COMPUTE_STATUS_DISABLED' % RAW)]
    return parse.urlencode(params)


def _judge(fleet, query, **kwargs):
    client, hosts, survey, _, _ = fleet
    body = client.get_allocation_candidates(query)
    offered = {u for u in hosts.values()
               if any(u in r['allocations']
                      for r in body['allocation_requests'])}
    found = verdicts.judge(client, survey, [verdicts.Query.parse(query)],
                           offered, **kwargs)
    return {name: next(v for v in found if v.uuid == u)
            for name, u in hosts.items()}


def test_each_host_is_named_with_the_term_that_left_it_out(fleet):
    judged = _judge(fleet, _query(), services={'disabled': 'maintenance'})
    assert judged['fits'].result == verdicts.CANDIDATE
    assert judged['fits-too'].result == verdicts.CANDIDATE
    (reason,) = judged['disabled'].reasons
    assert reason.startswith('root_required !COMPUTE_STATUS_DISABLED: '
                             'carries it')
    assert reason.endswith('(its compute service is disabled: '
                           'maintenance)')
    (reason,) = judged['no-raw'].reasons
    assert reason.startswith('root_required %s: lacks it (boots: nothing '
                             'reported)' % RAW)
    (reason,) = judged['full'].reasons
    assert reason == 'resources VCPU:2: needs 2, has 0 free'


def test_a_trait_is_named_with_what_asked_for_it(fleet):
    # The image's trait in the unsuffixed required (as Placement older
    # than 1.35 is asked): the formats the host boots
    # are named there too; ``why`` names the rule behind a trait.
    query = parse.urlencode([
        ('resources', 'VCPU:1'),
        ('required', '%s,!COMPUTE_STATUS_DISABLED' % RAW)])
    judged = _judge(fleet, query, why={
        RAW: 'for disk_format=raw', 'COMPUTE_STATUS_DISABLED': 'a rule'}.get)
    assert judged['fits'].result == verdicts.CANDIDATE
    assert judged['no-raw'].reasons == [
        'required %s: lacks it (boots: nothing reported), for '
        'disk_format=raw' % RAW]
    assert judged['disabled'].reasons == [
        'required !COMPUTE_STATUS_DISABLED: carries it (a rule)']


def test_the_servers_own_host_is_judged_with_its_allocation_back(fleet):
    client, hosts, _, _, server = fleet
    judged = _judge(fleet, _query(), current_host=hosts['full'],
                    give_back={hosts['full']: {'VCPU': 4}})
    assert judged['full'].result == verdicts.FITS_WITH_OWN
    assert judged['full'].reasons == []
    # Another host's allocation is not given back to this one.
    judged = _judge(fleet, _query(), current_host=hosts['full'],
                    give_back={hosts['fits']: {'VCPU': 4}})
    assert judged['full'].result == verdicts.EXCLUDED_WITH_OWN


def test_an_ironic_node_reserved_for_its_own_instance_fits_it(
        sqlite_placement):
    """Nova's ironic driver reserves a node's whole inventory while an
    instance is on it (nova/virt/ironic/driver.py, _node_resources_used):
    the instance's own node still fits it; another node so reserved does
    not."""
    client = sqlite_placement.client()
    tag = uuid.uuid4().hex[:8]
    writes.create_resource_class(client, 'CUSTOM_BAREMETAL')
    nodes = {}
    for name in ('mine', 'other'):
        rp = writes.create_resource_provider(client, '%s-%s' % (name, tag))
        generation = writes.put_inventories(
            client, rp['uuid'], rp['generation'], {
                'CUSTOM_BAREMETAL': {'total': 1}})[
                'resource_provider_generation']
        client.put_provider_traits(
            rp['uuid'], ['COMPUTE_NODE', RAW], generation)
        nodes[name] = rp['uuid']
    server = str(uuid.uuid4())
    writes.put_allocations(client, server, {
        'allocations': {nodes['mine']: {'resources': {
            'CUSTOM_BAREMETAL': 1}}},
        'project_id': str(uuid.uuid4()), 'user_id': str(uuid.uuid4()),
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    # Then nova-compute reports both nodes in use (or unavailable).
    for rp_uuid in nodes.values():
        generation = client.request(
            'GET', '/resource_providers/%s' % rp_uuid).json()['generation']
        writes.put_inventories(client, rp_uuid, generation, {
            'CUSTOM_BAREMETAL': {'total': 1, 'reserved': 1}})
    survey = survey_mod.Survey(
        {u: survey_mod.Host(u, name, {'raw'}) for name, u in nodes.items()})
    query = verdicts.Query.parse(_query(resources='CUSTOM_BAREMETAL:1'))
    found = verdicts.judge(client, survey, [query], set(),
                           current_host=nodes['mine'],
                           give_back={nodes['mine']: {'CUSTOM_BAREMETAL': 1}})
    judged = {v.uuid: v for v in found}
    assert judged[nodes['mine']].result == verdicts.FITS_WITH_OWN
    assert judged[nodes['other']].result == verdicts.EXCLUDED
    assert judged[nodes['other']].reasons[0].startswith(
        'resources CUSTOM_BAREMETAL:1: needs 1, has 0 free')


def test_member_of_names_the_aggregate(fleet):
    _, _, _, aggregate, _ = fleet
    judged = _judge(fleet, _query(aggregates=[aggregate]))
    assert judged['fits'].result == verdicts.CANDIDATE
    assert judged['fits-too'].reasons == [
        'member_of in:%s: in none of them' % aggregate]


def test_a_fitting_host_cut_by_the_limit_is_said_to_be(fleet):
    judged = _judge(fleet, _query(limit=1))
    offered = [n for n in ('fits', 'fits-too')
               if judged[n].result == verdicts.CANDIDATE]
    cut = ({'fits', 'fits-too'} - set(offered)).pop()
    assert len(offered) == 1
    assert judged[cut].reasons[0].startswith('limit=1: Placement returned 1')


def test_a_granular_group_no_provider_has(fleet):
    judged = _judge(fleet, _query(extra=[
        ('resources1', 'VCPU:1'), ('required1', 'HW_CPU_X86_SGX'),
        ('group_policy', 'none')]))
    (reason,) = judged['fits'].reasons
    assert reason == ('required1=HW_CPU_X86_SGX resources1=VCPU:1: no '
                      'provider of the host has all of it')


def test_forbidden_and_any_of_traits_and_aggregates(fleet):
    _, _, _, aggregate, _ = fleet
    judged = _judge(fleet, _query(extra=[
        ('required', 'in:%s,HW_CPU_X86_SGX' % RAW),
        ('member_of', '!in:' + aggregate)]))
    assert judged['fits'].reasons == [
        'member_of !in:%s: in it' % aggregate]
    assert judged['fits-too'].result == verdicts.CANDIDATE
    judged = _judge(fleet, _query(extra=[
        ('required', 'in:HW_CPU_X86_SGX,HW_CPU_X86_AVX512F')]))
    assert judged['fits'].reasons == [
        'required in:HW_CPU_X86_SGX,HW_CPU_X86_AVX512F: has none of them']


class _Counting:
    """An adapter that counts what is sent through it."""

    def __init__(self, adapter):
        self.adapter, self.sent = adapter, []

    def request(self, url, method, **kwargs):
        self.sent.append((method, url))
        return self.adapter.request(url, method, **kwargs)


def test_two_queries_read_each_listing_and_host_once(fleet,
                                                     sqlite_placement):
    """nova-scheduler's PCPU query and its VCPU fallback are judged
    together: the second asks Placement nothing the first did."""
    _, _, survey, _, _ = fleet
    counting = _Counting(sqlite_placement.adapter())
    client = placement_client.PlacementClient(counting)
    client.negotiate()
    counting.sent.clear()
    query = verdicts.Query.parse(_query())
    verdicts.judge(client, survey, [query], set())
    once = len(counting.sent)
    counting.sent.clear()
    verdicts.judge(client, survey, [query, query], set())
    assert len(counting.sent) == once


def test_no_valid_host_names_the_closest_hosts_with_every_term():
    """One line for --server and --disk-format alike: the hosts failing
    the fewest terms first, each with all of them, three at most."""
    found = [verdicts.Verdict('d', 'u4', verdicts.EXCLUDED, ['x', 'y']),
             verdicts.Verdict('c', 'u3', verdicts.EXCLUDED, ['x', 'y', 'z']),
             verdicts.Verdict('b', 'u2', verdicts.EXCLUDED, ['x']),
             verdicts.Verdict('a', 'u1', verdicts.EXCLUDED, ['x', 'y'])]
    assert verdicts.no_valid_host(found, ' (see --explain)') == (
        'none of 4 compute host(s) fits: b: x | a: x; y | d: x; y | '
        'and 1 more (see --explain)')
    assert verdicts.no_valid_host([]) == 'Placement knows no compute host'
