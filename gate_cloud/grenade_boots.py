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

"""Boots one after another on the devstack node while grenade upgrades it.

On the node (``python3 -m gate_cloud.grenade_boots``, as root, from the
phases' copy of gate_cloud): a raw and a qcow2 image and a flavor of its
own, then raw and qcow2 boots in turn, each to its end and deleted, until
the stop file appears. Each boot is one JSON line: its format, what it
ended in, its fault, its host, and whether that host's provider (and any
provider) carried the format's ``COMPUTE_IMAGE_TYPE_*`` trait when it
ended.

On the gate's side, ``Stream`` starts and stops it and ``judge`` reads the
lines: a boot the filters sent to a host without the trait, or refused
("No compute host boots ...") though a host carried it, fails the job
wherever it happened; a boot of a format no host carries must end in
ERROR; any other failure is "refused during a restart" when it overlapped
the window judged (grenade's run, where every service is stopped and
started again; a phase's restarts of nova-scheduler), and fails the job
otherwise.
"""

import json
import pathlib
import subprocess
import sys
import time

from gate_cloud import GateError
from gate_cloud import devstack_node as node

STOP_FILE = node.PHASES_DIR + '/grenade-boots.stop'
PREFIX = 'grenade-boots'
FORMATS = ('raw', 'qcow2')
BOOT_DEADLINE = 300
#: A boot in flight ends (its deadline and its delete's) before the
#: stream stops.
STOP_DEADLINE = BOOT_DEADLINE + 180
REFUSED_BY_FILTER = 'No compute host boots'
#: The stream's line once its images and flavor are made.
READY = '[boots] ready'
READY_DEADLINE = 300


class Stream:
    """The node's boot stream, from the gate's side."""

    def __init__(self, box, log):
        self.box = box
        self.log = pathlib.Path(log)
        self.proc = None

    def start(self):
        from gate_cloud import devstack_job  # the gate's side only
        env = devstack_job.node_code(self.box, devstack_job.DEST)
        self.box.path(STOP_FILE).unlink(missing_ok=True)
        self.out = open(self.log, 'wb')
        self.proc = subprocess.Popen(
            self.box.command([node.PYTHON, '-m', 'gate_cloud.grenade_boots'],
                             env=env),
            stdin=subprocess.DEVNULL, stdout=self.out,
            stderr=subprocess.STDOUT)
        # Its images uploaded before the phase beside it uploads its own:
        # Glance's one API worker times out reading two uploads at once.
        end = time.monotonic() + READY_DEADLINE
        while READY not in self.log.read_text(errors='replace'):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise GateError('the boot stream did not start (see %s)'
                                % self.log)
            time.sleep(1)

    def stop(self):
        """Stop after the boot in flight; every boot's record."""
        self.box.path(STOP_FILE).touch()
        try:
            self.proc.wait(timeout=STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=60)
            raise GateError('the boot stream did not stop within %ds; its '
                            'log: %s' % (STOP_DEADLINE, self.log))
        finally:
            self.out.close()
        return records(self.log.read_text(errors='replace').splitlines())


def records(lines):
    """The boots' JSON lines among the stream's output."""
    return [json.loads(line) for line in lines if line.startswith('{')]


def judge(boots, window):
    """(the phase's line, the failures): ``window`` = [start, end] of
    grenade's run (epoch seconds)."""
    failures = []
    restart = 0
    for boot in boots:
        fmt, status, fault = boot['format'], boot['status'], boot['fault']
        if status == 'ACTIVE' and boot['host_has_trait'] is False:
            failures.append('a %s boot went to %s, whose provider lacks its '
                            'trait' % (fmt, boot['host']))
        elif REFUSED_BY_FILTER in fault and boot['any_has_trait']:
            failures.append('a %s boot was refused though a host carries '
                            'its trait: %s' % (fmt, fault))
        elif status == 'ACTIVE' or (status == 'ERROR'
                                    and boot['any_has_trait'] is False):
            # Placed, or refused when no host carries the format's trait
            # (by the filters, or by Nova's own prefilter once rolled back).
            continue
        elif window[0] <= boot['end'] and boot['start'] <= window[-1]:
            restart += 1
        else:
            failures.append('a %s boot ended %s outside the upgrade: %s'
                            % (fmt, status, fault))
    if not boots:
        failures.append('no boot ran')
    line = ('boots %d, failed %d, refused during a restart %d'
            % (len(boots), len(failures), restart))
    return line, failures


def _formats_carried(cloud):
    """{format: set of provider names carrying its trait}, or None while
    Placement does not answer."""
    try:
        traits = cloud.all_traits()
    except Exception:  # Placement or Keystone down in the upgrade
        return None
    return {fmt: {name for name, carried in traits.items()
                  if 'COMPUTE_IMAGE_TYPE_%s' % fmt.upper() in carried}
            for fmt in FORMATS}


def _boot(cloud, n, fmt, image_id, flavor_id):
    start = time.time()
    record = {'n': n, 'format': fmt, 'start': start, 'host': None,
              'fault': ''}
    try:
        server = cloud.boot('%s-%d' % (PREFIX, n), image_id, flavor_id,
                            BOOT_DEADLINE)
        record['status'] = server['status']
        record['fault'] = server.get('fault', {}).get('message', '')
        record['host'] = server.get('OS-EXT-SRV-ATTR:hypervisor_hostname')
    except Exception as exc:  # an API down in the upgrade
        record['status'] = 'refused'
        record['fault'] = str(exc)[:300]
    record['end'] = time.time()
    carried = _formats_carried(cloud)
    record['any_has_trait'] = None if carried is None else bool(carried[fmt])
    record['host_has_trait'] = (None if carried is None or not record['host']
                                else record['host'] in carried[fmt])
    return record


def main():
    cloud = node.Cloud()
    images = {fmt: cloud.upload('%s-%s' % (PREFIX, fmt), fmt)
              for fmt in FORMATS}
    flavor_id = cloud.create_flavor(PREFIX, 64, 1, 1)
    print(READY, flush=True)
    stop = pathlib.Path(STOP_FILE)
    n = 0
    while not stop.exists():
        fmt = FORMATS[n % len(FORMATS)]
        n += 1
        record = _boot(cloud, n, fmt, images[fmt], flavor_id)
        print(json.dumps(record), flush=True)
        if record['status'] == 'refused':
            time.sleep(3)
    for image_id in images.values():
        cloud.delete_image(image_id)
    cloud.delete_flavor(flavor_id)
    print('[boots] stopped after %d boots' % n)
    return 0


if __name__ == '__main__':
    sys.exit(main())
