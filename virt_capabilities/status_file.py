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

"""The last sync, where monitoring reads it: a small JSON file.

Each sync (a one-shot ``report`` or a service's cycle) replaces the file
whole (``files.write_atomically``); the last success is read back from it.
Its fields, and why JSON: doc/source/install/compute.rst ("Monitoring");
what to alert on: doc/source/admin/monitoring.rst.
"""

import datetime
import json
import logging
import os

from image_type_common import exceptions
from virt_capabilities import files

LOG = logging.getLogger(__name__)

FORMAT = 'virt-capabilities-status/1'
OK, FAILED = 'ok', 'failed'


class StatusNotSaved(exceptions.Error):
    """The status file could not be written: monitoring would read an old
    sync as the last one (exit 1 for a one-shot run)."""


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec='seconds')


def _previous_last_ok(path):
    """The last success the file records: none yet, or not ours, None."""
    try:
        with open(path) as f:
            previous = json.load(f)
        return (previous.get('last_ok') if previous.get('format') == FORMAT
                else None)
    except (OSError, ValueError, AttributeError):
        return None


def record(path, reporter_name, report=None, error=None, clock=now):
    """Write what a sync did: its SyncReport, or the error that stopped it
    before one; a failure keeps the last success the file records. Nothing
    without a path. StatusNotSaved (naming the file) if it cannot be
    written."""
    if not path:
        return
    time = clock()
    if error is None and report is not None and not report.ok:
        error = _report_error(report)
    failed = error is not None
    document = {
        'format': FORMAT,
        'reporter_name': reporter_name,
        'time': time,
        'result': FAILED if failed else OK,
        'error': None if error is None else str(error),
        'last_ok': time if not failed else _previous_last_ok(path),
        'changed': [{'provider': r.uuid, 'added': r.added,
                     'removed': r.removed}
                    for r in (report.results if report else ())
                    if r.changed],
        'failed': [{'provider': r.uuid, 'error': str(r.error)}
                   for r in (report.errors if report else ())],
    }
    try:
        files.write_atomically(path, json.dumps(document, indent=1))
    except OSError as exc:
        raise StatusNotSaved(
            'cannot write status file %s (%s): monitoring reads the '
            'previous sync as the last one; make it writable or point '
            '[virt_capabilities] status_file elsewhere'
            % (path, exc.strerror or exc)) from exc


def _report_error(report):
    """The one line that says why a sync that ran did not succeed."""
    if report.state_error is not None:
        return report.state_error
    if report.missing_providers:
        return report.missing_line()
    if report.missing_traits:
        return 'Placement lacks trait(s) %s' % ', '.join(
            sorted(report.missing_traits))
    return '%d %s(s) failed' % (len(report.errors), report.kind)


def remove(path):
    """Delete the status file (``virt-capabilities remove``); nothing if
    there is none."""
    if not path:
        return
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StatusNotSaved('cannot delete status file %s (%s)'
                             % (path, exc.strerror or exc)) from exc
