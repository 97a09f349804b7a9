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

"""nova_explain: what it concludes from the host verdicts."""

from image_type_filter.diagnostics import nova_explain
from image_type_filter.diagnostics import verdicts


def test_a_server_whose_own_host_fits_has_a_valid_host():
    """Placement may offer no host to a copy of an ACTIVE server (it took
    the last free ironic node): its own host fitting is no "No valid
    host"."""
    own = verdicts.Verdict('node-1', 'u1', verdicts.FITS_WITH_OWN, [])
    other = verdicts.Verdict('node-2', 'u2', verdicts.EXCLUDED,
                             ['root_required !CUSTOM_TROVE: carries it'])
    assert nova_explain.fits_its_own_host([other, own])
    assert not nova_explain.fits_its_own_host([other])
    assert not nova_explain.fits_its_own_host([other, verdicts.Verdict(
        'node-1', 'u1', verdicts.EXCLUDED_WITH_OWN, ['resources VCPU:1'])])


class _Compute:
    """The compute API's answers, as Nova 34 gives them (os-services,
    os-hypervisors/detail at 2.53 and later)."""

    def __init__(self, services, hypervisors):
        self._services, self._hypervisors = services, hypervisors

    def compute_services(self):
        return self._services

    def hypervisors(self):
        return self._hypervisors


def test_a_disabled_service_is_found_by_its_compute_nodes_names_too():
    """A libvirt node's provider is named after its hypervisor hostname,
    an ironic node's after its uuid: neither is the service's host."""
    compute = _Compute(
        [{'host': 'libvirt-qemu', 'status': 'disabled',
          'disabled_reason': 'gate-maint'},
         {'host': 'fake-raw', 'status': 'enabled', 'disabled_reason': None}],
        [{'hypervisor_hostname': 'vm', 'status': 'disabled',
          'service': {'host': 'libvirt-qemu', 'id': 's1',
                      'disabled_reason': 'gate-maint'}},
         {'hypervisor_hostname': 'fake-raw', 'status': 'enabled',
          'service': {'host': 'fake-raw', 'id': 's2',
                      'disabled_reason': None}}])
    assert nova_explain._disabled_services(compute) == {
        'libvirt-qemu': 'gate-maint', 'vm': 'gate-maint'}
    assert nova_explain._disabled_services(_Compute(
        [{'host': 'a', 'status': 'enabled'}], [])) == {}
