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

"""The gate's network and its nodes, as far as they show without root.

The gate job makes them for real (README's gate command); here the
commands they would run are recorded: which rules the bridge gets, that
``down`` takes away everything ``up`` made, what a node knows of the
others.
"""

import subprocess

import pytest

from gate_cloud import GateError
from gate_cloud import container


@pytest.fixture
def recorded(monkeypatch, tmp_path):
    """Every command Network runs; /proc's ip_forward and /sys's links
    as files of the test."""
    calls = []
    links = set()
    jumps = []
    others = []

    def run(argv, timeout=600, check=True, **kwargs):
        argv = [str(a) for a in argv]
        calls.append(argv)
        rc = 0
        if argv[:3] == ['ip', 'link', 'add']:
            links.add(argv[3])
        if argv[:3] == ['ip', 'link', 'delete']:
            links.discard(argv[3])
        # The jumps into our chains, as iptables keeps them.
        if '-I' in argv:
            jumps.append(argv[argv.index('-I') + 1:])
        if '-D' in argv:
            jump = argv[argv.index('-D') + 1:]
            rc = 0 if jump in jumps else 1
            if jump in jumps:
                jumps.remove(jump)
        listed = ''.join('-A FORWARD -j %s\n' % c for c in others) if (
            argv[-2:] == ['-S', 'FORWARD']) else ''
        return subprocess.CompletedProcess(argv, rc, listed, '')

    forward = tmp_path / 'ip_forward'
    forward.write_text('0\n')
    monkeypatch.setattr(container, '_run', run)
    monkeypatch.setattr(container, '_link_exists', lambda n: n in links)
    monkeypatch.setattr(container, '_host_nameservers', lambda: ['10.9.9.9'])
    monkeypatch.setattr(container, 'IP_FORWARD', forward)
    monkeypatch.setattr(container, 'IP_FORWARD_FOUND',
                        tmp_path / 'ip_forward.found')
    return calls, links, forward, others


def network(tmp_path):
    return container.Network('itftest0', '10.254.253.0/24', 'ITF-TEST',
                             tmp_path / 'state')


def rules(calls):
    return [c[c.index('-A') + 2:] for c in calls
            if c[0] == 'iptables' and '-A' in c and c[c.index('-A') + 1]
            == 'ITF-TEST-FWD']


def test_the_bridge_lets_the_nodes_talk_and_only_dns_and_https_out(
        tmp_path, recorded):
    calls, links, forward, _ = recorded
    net = network(tmp_path)
    net.up()
    assert links == {'itftest0'}
    assert ['ip', 'addr', 'add', '10.254.253.1/24', 'dev', 'itftest0'] in \
        calls
    assert forward.read_text() == '1\n'
    assert rules(calls) == [
        ['-i', 'itftest0', '-o', 'itftest0', '-j', 'ACCEPT'],
        ['-o', 'itftest0', '-m', 'conntrack', '--ctstate',
         'RELATED,ESTABLISHED', '-j', 'ACCEPT'],
        ['-i', 'itftest0', '-d', '10.9.9.9', '-p', 'udp', '--dport', '53',
         '-j', 'ACCEPT'],
        ['-i', 'itftest0', '-d', '10.9.9.9', '-p', 'tcp', '--dport', '53',
         '-j', 'ACCEPT'],
        ['-i', 'itftest0', '-p', 'tcp', '-m', 'multiport', '--dports',
         '80,443', '-j', 'ACCEPT'],
        ['-i', 'itftest0', '-j', 'DROP'],
        ['-o', 'itftest0', '-j', 'DROP']]
    masquerade = [c for c in calls if 'MASQUERADE' in c]
    assert masquerade[0][-7:] == ['-s', '10.254.253.0/24', '!', '-d',
                                  '10.254.253.0/24', '-j', 'MASQUERADE']


def test_down_takes_away_what_up_made_from_another_process(tmp_path,
                                                         recorded):
    calls, links, forward, _ = recorded
    network(tmp_path).up()
    del calls[:]
    # Another process (devstack down) knows the network by its state.
    network(tmp_path).down()
    assert links == set()
    assert forward.read_text() == '0\n'
    for chain, parent in (('ITF-TEST-FWD', 'FORWARD'),
                          ('ITF-TEST-NAT', 'POSTROUTING')):
        assert [c for c in calls if c[-4:] == ['-D', parent, '-j', chain]]
        assert [c for c in calls if c[-2:] == ['-X', chain]], chain
    assert not (tmp_path / 'state' / 'itftest0.json').exists()
    # Twice is harmless.
    network(tmp_path).down()


def test_a_bridge_already_there_is_refused_and_left_alone(tmp_path,
                                                        recorded):
    calls, links, _, _ = recorded
    links.add('itftest0')
    with pytest.raises(GateError, match='itftest0 exists'):
        network(tmp_path).up()
    assert links == {'itftest0'}
    assert not [c for c in calls if c[0] == 'iptables']


def test_forwarding_stays_on_while_another_test_network_forwards(
        tmp_path, recorded):
    """Another job's containers (their ITF- chains) still need it."""
    _, _, forward, others = recorded
    network(tmp_path).up()
    others.append('ITF-FLEET-FWD')
    network(tmp_path).down()
    assert forward.read_text() == '1\n'


def test_the_last_network_to_go_puts_back_what_the_first_found(
        tmp_path, recorded):
    """Side by side, whichever job ends first: the value before the
    first network came up, not the 1 a later one found."""
    _, _, forward, others = recorded
    first = container.Network('itftest0', '10.254.253.0/24', 'ITF-TEST',
                              tmp_path / 'one')
    second = container.Network('itftest1', '10.254.250.0/24', 'ITF-TEST-UP',
                               tmp_path / 'two')
    first.up()
    others.append('ITF-TEST-FWD')
    second.up()
    others.append('ITF-TEST-UP-FWD')
    others.remove('ITF-TEST-FWD')
    first.down()
    assert forward.read_text() == '1\n'
    others.remove('ITF-TEST-UP-FWD')
    second.down()
    assert forward.read_text() == '0\n'


def test_a_node_knows_every_node_and_its_own_address(tmp_path, monkeypatch):
    monkeypatch.setattr(container, '_host_nameservers', lambda: ['10.9.9.9'])
    root = tmp_path / 'root'
    (root / 'etc/systemd/system').mkdir(parents=True)
    node = network(tmp_path).container('itftest-compute1', '10.254.253.3')
    node._write_node_files(root, [('itftest', '10.254.253.2'),
                                  ('itftest-compute1', '10.254.253.3')])
    assert (root / 'etc/hostname').read_text() == 'itftest-compute1\n'
    hosts = (root / 'etc/hosts').read_text().splitlines()
    assert '10.254.253.2 itftest' in hosts
    assert '10.254.253.3 itftest-compute1' in hosts
    assert (root / 'etc/resolv.conf').read_text() == 'nameserver 10.9.9.9\n'
    unit = (root / 'etc/systemd/system/itf-gate-network.service').read_text()
    assert 'ip addr replace 10.254.253.3/24 dev host0' in unit
    assert 'ip route replace default via 10.254.253.1' in unit
    assert (root / 'etc/systemd/system/multi-user.target.wants/'
            'itf-gate-network.service').is_symlink()
