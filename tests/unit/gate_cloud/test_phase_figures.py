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

"""The phases' figures, read back into the run's summary table."""

from gate_cloud import phase_figures


def test_the_phases_figures_in_one_table():
    results = {
        'upgrade': {'seconds': 412, 'stream': {
            'attempted': 60, 'failed': 0,
            'refused': {'nova-api': 2, 'placement': 1}},
            'traits_lost': {}},
        'rollback': {'seconds': 150, 'boots': {'attempted': 16,
                                               'failed': 0}},
        'reporter-removal': {'seconds': 20, 'boots': {'attempted': 1,
                                                      'failed': 0},
                             'traits_lost': {'fake-trove': ['COMPUTE_NODE']}},
    }
    lines = phase_figures.table(results).splitlines()
    assert lines[0].split()[:2] == ['phase', 'seconds']
    assert lines[1].split() == ['upgrade', '412', '60', '0', 'nova-api', '2,',
                                'placement', '1', '0']
    assert lines[2].split() == ['rollback', '150', '16', '0', '0', '0']
    assert lines[3].split() == ['reporter-removal', '20', '1', '0', '0',
                                '1']
    assert phase_figures.table({}) == '(no phase ran)'
