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

"""candidates warns where Nova would refuse, drop or ignore, naming the
input; --strict refuses. Against the demo fleet on a real Placement."""

import subprocess
import sys

import pytest

from tests.helpers import clean_env


def candidates(server, tmp_path, *args, conf_extra=''):
    conf = tmp_path / 'nova.conf'
    conf.write_text(server.nova_conf_section() + conf_extra)
    return subprocess.run(
        [sys.executable, '-m', 'image_type_filter.cmd.main', 'candidates',
         '--config-file', str(conf), '-f', 'value', '-c', 'name', *args],
        capture_output=True, text=True, timeout=120, env=clean_env())


def warnings(proc):
    return [line for line in proc.stderr.splitlines()
            if line.startswith('WARNING image_type_filter.cmd.candidates')]


CASES = [
    # Glance knows no qcow3 (and with [image_type_filter] unknown_format =
    # ignore, the default, every host would be offered).
    (['--disk-format', 'qcow3'], '', "'qcow3' is not one of Glance's"),
    # Nova's ImageMetaProps has no such field: it drops the property.
    (['--disk-format', 'qcow2', '--image-property', 'hw_disk_buss=scsi'],
     '', "'hw_disk_buss=scsi': Nova drops it"),
    # Property names are case-sensitive in Nova.
    (['--disk-format', 'qcow2', '--image-property', 'HW_DISK_BUS=scsi'],
     '', "'HW_DISK_BUS=scsi': Nova ignores it"),
    # Nova compares with 'required' exactly.
    (['--disk-format', 'qcow2', '--image-property',
      'trait:CUSTOM_TROVE=Required'], '',
     "'trait:CUSTOM_TROVE=Required': Nova ignores it"),
    # nova-scheduler refuses a rule keyed on a property Nova drops.
    (['--disk-format', 'qcow2', '--image-property', 'trove=true'],
     '[image_isolation]\nenabled = True\nrules = trove=true:CUSTOM_TROVE\n',
     "nova-scheduler would refuse to start: [image_isolation] rules: "
     "'trove=true:CUSTOM_TROVE'"),
]


@pytest.mark.parametrize('args,conf_extra,says', CASES)
def test_warns_naming_the_input_and_strict_refuses(demo_fleet, tmp_path,
                                                   args, conf_extra, says):
    server, _ = demo_fleet
    proc = candidates(server, tmp_path, *args, conf_extra=conf_extra)
    assert proc.returncode == 0, proc.stderr
    assert [w for w in warnings(proc) if says in w], proc.stderr
    proc = candidates(server, tmp_path, '--strict', *args,
                      conf_extra=conf_extra)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert proc.stdout == ''


def test_what_nova_reads_draws_no_warning(demo_fleet, tmp_path):
    server, _ = demo_fleet
    proc = candidates(
        server, tmp_path, '--strict', '--disk-format', 'qcow2',
        '--image-property', 'hw_disk_bus=virtio',
        '--image-property', 'os_distro=ubuntu',
        '--image-property', 'hw_numa_mem.0=512',
        '--image-property', 'trait:CUSTOM_TROVE=required',
        conf_extra='[image_isolation]\nenabled = True\n'
                   'rules = CUSTOM_TROVE, os_distro=rhel:CUSTOM_RHEL\n')
    assert proc.returncode == 0, proc.stderr
    assert warnings(proc) == []
    assert proc.stdout.split() == ['trove-1']
