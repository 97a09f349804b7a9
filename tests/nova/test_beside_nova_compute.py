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

"""nova-compute and the reporter on one provider: they settle, never flap.

nova-compute (Nova's fake driver, in Nova's own harness) writes the
image-type traits it computes; the reporter writes the same ones from the
same nova.conf. Each cycle clears nova-compute's provider cache first (what
its SIGHUP or refresh interval does), the worst case: it re-reads the
provider and rewrites whatever differs from its own answer.
"""

import pytest

pytest.importorskip('nova')

from tests.nova import base  # noqa: E402

# Both writers own the image types here (not the default): the worst case.
CUSTOM = ('[virt_capabilities]\ncustom_traits = CUSTOM_BESIDE_NOVA\n'
          'image_type_traits_owner = reporter\n')
CYCLES = 8


class TestBesideNovaCompute(base.InsideNova):
    def cycles(self, reporter_extra):
        compute = self._start_compute('beside')  # node name = host name
        uuid = self._get_provider_uuid_by_host('beside')
        reportclient = compute.manager.rt.reportclient
        generations = []
        for _ in range(CYCLES):
            self.assertEqual(0, self.run_reporter('beside', reporter_extra))
            reportclient.clear_provider_cache()
            self._run_periodics()
            generations.append(
                self._get_resource_provider_by_uuid(uuid)['generation'])
        return uuid, generations

    def test_the_generation_stops_changing(self):
        uuid, generations = self.cycles(CUSTOM)
        self.assertEqual(1, len(set(generations[2:])), generations)
        traits = set(self._get_provider_traits(uuid))
        self.assertIn('COMPUTE_IMAGE_TYPE_RAW', traits)
        self.assertIn('CUSTOM_BESIDE_NOVA', traits)
        self.assertIn('COMPUTE_NODE', traits)  # nova-compute's own, kept

    def test_a_disagreement_would_flap_for_ever(self):
        """The control: told to exclude raw where nova-compute is not, the
        two rewrite each other every cycle (what the test above rules out)."""
        _, generations = self.cycles(
            CUSTOM + '[compute]\nimage_type_exclude_list = raw\n')
        later = generations[2:]
        self.assertEqual(sorted(set(later)), later)  # rises every cycle
        self.assertEqual(len(later), len(set(later)))
