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

"""Local files the reporter writes, replaced atomically and durably.

The ownership state and the sync status are each replaced whole: written
to a temporary file in the same directory, flushed and fsynced, renamed
over the old one, and the directory fsynced. A reader (another reporter,
monitoring) sees the old file or the new one, never half of one, and a
crash leaves no stray temporary file behind. A new file is private
(0600); a replaced one keeps its mode.
"""

import os
import stat
import tempfile


def write_atomically(path, text):
    """Replace ``path`` with ``text``; OSError if it cannot be done (the
    old file, if any, is then left as it was)."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = None  # a new file: mkstemp's 0600
        fd, tmp = tempfile.mkstemp(
            dir=directory, prefix='.%s-' % os.path.basename(path))
        with os.fdopen(fd, 'w') as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
        fd = os.open(directory, os.O_RDONLY)  # the rename made durable
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    finally:
        if tmp is not None:  # failed or interrupted: no stray file
            os.unlink(tmp)
