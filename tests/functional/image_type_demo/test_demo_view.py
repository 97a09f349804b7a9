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

"""The demo's default view: 100 columns, and which host takes which
request at a glance."""

import subprocess
import sys

from tests.helpers import clean_env

WIDTH = 100


def cells(line):
    return [cell.strip() for cell in line.split('|')[1:-1]]


def test_default_view_fits_100_columns_and_is_a_matrix(tmp_path):
    private_tmp = tmp_path / 'tmp'
    private_tmp.mkdir()
    proc = subprocess.run(
        [sys.executable, '-m', 'image_type_filter.cmd.main', 'demo'],
        capture_output=True, text=True, timeout=600,
        env=clean_env(TMPDIR=str(private_tmp), COLUMNS='300'))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= WIDTH
    hosts_block, matrix_block = proc.stdout.split('\n\n')[:2]
    number = {cells(line)[1]: cells(line)[0]
              for line in hosts_block.splitlines()[4:]
              if line.startswith('| ')}
    header, *rows = [cells(line) for line in matrix_block.splitlines()
                     if line.startswith('| ')]
    offered = {row[0]: {header[i] for i, mark in enumerate(row)
                        if i and mark == 'x'} for row in rows}
    # The demo fleet (image_type_demo/fleet.py): only VMware boots vmdk;
    # ploop only Parallels; the Trove host only tagged requests.
    assert offered['vmdk'] == {number['vmware-1'], number['vmware-2']}
    assert offered['ploop'] == {number['parallels-1']}
    assert offered['qcow2 trait:CUSTOM_TROVE=required'] == {
        number['trove-1']}
    assert offered['vmdk filters off'] == set(number.values())
    assert offered['vdi'] == set()
    assert 'No valid host' in proc.stdout.split('\n\n')[2]
