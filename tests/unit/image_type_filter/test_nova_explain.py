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
