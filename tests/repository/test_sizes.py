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

"""The sizes the project holds itself to, counted as ``wc -l`` counts
every Python file of a package: the product stays a request filter and a
trait reporter on what openstacksdk, keystoneauth1 and Nova already do,
and the gate's own code (what devstack and grenade do not do for it: the
container and the phases) stays a harness around upstream, not a second
devstack."""

import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
#: gate_cloud's bound (doc/source/contributor/gate.rst).
GATE_LINES = 4260
#: The product's bound (doc/source/contributor/architecture.rst).
PRODUCT = ('image_type_common', 'image_type_filter', 'virt_capabilities')
PRODUCT_LINES = 10500


def lines(*packages):
    return sum(len(path.read_bytes().splitlines())
               for package in packages
               for path in (REPO / package).rglob('*.py'))


def test_the_gate_s_own_code_stays_a_harness_around_devstack():
    assert 0 < lines('gate_cloud') <= GATE_LINES


def test_the_product_stays_within_its_bound():
    assert 0 < lines(*PRODUCT) <= PRODUCT_LINES
