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

"""The versions the cloud runs: one pinned set per OpenStack series.

``gate_cloud/constraints/<series>.txt`` is a pip constraints file holding
every distribution of that series' virtualenv, each pinned to one version,
so a run today and a run next month install the same cloud. Its header
names the releases it was resolved from (``# requires:``) and the command
that wrote it; ``python3 -m gate_cloud pin SERIES`` re-resolves it from
those, ``python3 -m gate_cloud pin SERIES REQUIREMENT...`` from others. A
series is added by adding its file: nothing else names the series.

Each series has a virtualenv of its own, ``<repo>/.venv-cloud-<series>``,
built from its file alone (``prepare``) and rebuilt from scratch when the
file, the list of what to install or the project's ``setup.cfg`` changes.
A service runs from the virtualenv of the series it is given
(``context.Cloud.series``), so services of two series can run side by
side, and one can be stopped and started again from the other.
"""

import hashlib
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

from gate_cloud import layout
from gate_cloud.processes import GateError

CONSTRAINTS = pathlib.Path(__file__).resolve().parent / 'constraints'
#: Installed editable into every series' virtualenv, never pinned, each
#: with its extras: this project with ``[cli]`` (the reporters and the
#: operator commands the gate runs; nova-scheduler needs only the base) and
#: its tempest plugin.
EDITABLE = ((layout.REPO, '[cli]'), (layout.REPO / 'contrib' / 'tempest', ''))
#: What the editable installs read their dependencies from: a change there
#: rebuilds the virtualenvs.
EDITABLE_METADATA = ('setup.cfg', 'pyproject.toml',
                     'contrib/tempest/pyproject.toml')
#: The clients the gate runs against the cloud, beside the services' own
#: needs (``PYPI`` in each service's module).
TOOLS = ('tempest', 'python-openstackclient', 'osc-placement')
STAMP = 'gate-cloud.stamp'
REQUIRES = '# requires:'
PIP_TIMEOUT = 3600


def canonical(name):
    """A distribution's name as pip compares them (PEP 503)."""
    return re.sub(r'[-_.]+', '-', name).lower()


def _key(series):
    return tuple(int(part) if part.isdigit() else part
                 for part in series.split('.'))


def available():
    """Every series with a constraints file, oldest first."""
    return sorted((p.stem for p in CONSTRAINTS.glob('*.txt')), key=_key)


def newest():
    found = available()
    if not found:
        raise GateError('no constraints file in %s' % CONSTRAINTS)
    return found[-1]


def constraints_file(series):
    path = CONSTRAINTS / ('%s.txt' % series)
    if not path.exists():
        raise GateError('no pinned set for series %r in %s (there are: %s)'
                        % (series, CONSTRAINTS, ', '.join(available())))
    return path


def pins(series):
    """{canonical name: version} of the series' constraints file."""
    out = {}
    for line in constraints_file(series).read_text().splitlines():
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition('==')
        if not sep:
            raise GateError('%s: %r is not name==version'
                            % (constraints_file(series), line))
        out[canonical(name.strip())] = version.strip()
    return out


def requires(series):
    """The releases the series' set was resolved from (its header)."""
    for line in constraints_file(series).read_text().splitlines():
        if line.startswith(REQUIRES):
            return line[len(REQUIRES):].split()
    raise GateError('%s has no %r line' % (constraints_file(series),
                                           REQUIRES))


def venv(series):
    return layout.REPO / ('.venv-cloud-%s' % series)


def venv_bin(series, program):
    return str(venv(series) / 'bin' / program)


def venv_file(series, relative):
    """A data file pip installed into the series' virtualenv (e.g.
    ``etc/nova/api-paste.ini``)."""
    base = venv(series)
    for root in (base, base / 'local'):
        if (root / relative).exists():
            return root / relative
    found = list(base.glob('lib/python*/site-packages/**/'
                           + pathlib.Path(relative).name))
    if found:
        return found[0]
    raise GateError('%s not found in %s' % (relative, base))


def _stamp(series, packages):
    digest = hashlib.sha256(constraints_file(series).read_bytes())
    for part in sorted(packages):
        digest.update(part.encode() + b'\0')
    for name in EDITABLE_METADATA:
        f = layout.REPO / name
        if f.exists():
            digest.update(name.encode() + b'\0' + f.read_bytes())
    return digest.hexdigest()


def _editables():
    out = []
    for path, extras in EDITABLE:
        if (path / 'setup.cfg').exists() or (path / 'pyproject.toml').exists():
            out += ['-e', str(path) + extras]
    return out


def _pip(venv_dir, args, log_path, what):
    layout.STATE.mkdir(mode=0o700, exist_ok=True)
    with open(log_path, 'ab') as out:
        out.write(('\n$ pip %s\n' % ' '.join(args)).encode())
        out.flush()
        try:
            proc = subprocess.run(
                [str(pathlib.Path(venv_dir) / 'bin' / 'pip')] + args,
                stdout=out, stderr=out, timeout=PIP_TIMEOUT,
                env={'PATH': '/usr/bin:/bin', 'TMPDIR': str(layout.STATE),
                     'HOME': str(pathlib.Path.home())})
        except subprocess.TimeoutExpired:
            raise GateError('%s: pip ran over %d s; see %s'
                            % (what, PIP_TIMEOUT, log_path)) from None
    if proc.returncode:
        raise GateError('%s failed (pip exit %d); see %s'
                        % (what, proc.returncode, log_path))


def _new_venv(path, log_path):
    shutil.rmtree(path, ignore_errors=True)
    with open(log_path, 'ab') as out:
        proc = subprocess.run([sys.executable, '-m', 'venv', str(path)],
                              stdout=out, stderr=out, timeout=600)
    if proc.returncode:
        raise GateError('cannot create %s; see %s' % (path, log_path))


def freeze_lines(venv_dir):
    """``name==version`` of each distribution a virtualenv holds (editable
    installs left out), as pip names them."""
    proc = subprocess.run(
        [str(pathlib.Path(venv_dir) / 'bin' / 'pip'), 'freeze',
         '--exclude-editable'], capture_output=True, text=True, timeout=300)
    if proc.returncode:
        raise GateError('pip freeze in %s failed: %s'
                        % (venv_dir, proc.stderr.strip()[-200:]))
    return sorted((line for line in proc.stdout.splitlines()
                   if '==' in line), key=str.lower)


def freeze(venv_dir):
    """{canonical name: version} of what a virtualenv holds."""
    return {canonical(name): version for name, _, version in
            (line.partition('==') for line in freeze_lines(venv_dir))}


def unpinned(series, packages):
    """The names in ``packages`` the series' set does not pin."""
    have = pins(series)
    return sorted(p for p in packages if canonical(p) not in have)


def ensure_venv(series, packages, log):
    """The series' virtualenv with ``packages`` (names, no versions: the
    constraints file gives them) and the editable installs. Built afresh
    when what it should hold changed; checked to hold nothing unpinned."""
    path = venv(series)
    stamp = path / STAMP
    want = _stamp(series, packages)
    if stamp.exists() and stamp.read_text() == want:
        return
    missing = unpinned(series, packages)
    if missing:
        raise GateError('%s pins no version of %s; re-pin: python3 -m '
                        'gate_cloud pin %s' % (constraints_file(series),
                                               ', '.join(missing), series))
    pip_log = layout.path('pip-%s.log' % series)
    layout.STATE.mkdir(mode=0o700, exist_ok=True)
    log('pip install the %s set into %s (a few minutes)' % (series, path))
    started = time.monotonic()
    _new_venv(path, pip_log)
    _pip(path, ['install', '-q', '-c', str(constraints_file(series))]
         + sorted(packages) + _editables(), pip_log,
         'pip install into %s' % path)
    extra = sorted('%s==%s' % item for item in freeze(path).items()
                   if item[0] not in pins(series))
    if extra:
        raise GateError('%s holds %s, which %s does not pin; re-pin: '
                        'python3 -m gate_cloud pin %s'
                        % (path, ', '.join(extra), constraints_file(series),
                           series))
    stamp.write_text(want)
    log('%s ready in %.0f s' % (path, time.monotonic() - started))


def pin(series, requirements, packages, log):
    """Resolve ``packages`` with ``requirements`` (e.g. nova==34.0.0) in a
    fresh virtualenv, check it, and write the series' constraints file."""
    requirements = list(requirements) or requires(series)
    names = {canonical(re.split(r'[<>=!~; \[]', r, maxsplit=1)[0])
             for r in requirements}
    wanted = list(requirements) + sorted(
        p for p in packages if canonical(p) not in names)
    layout.STATE.mkdir(mode=0o700, exist_ok=True)
    pip_log = layout.path('pip-pin-%s.log' % series)
    log('resolving the %s set: %s' % (series, ' '.join(requirements)))
    with tempfile.TemporaryDirectory(prefix='gate-pin-') as tmp:
        scratch = pathlib.Path(tmp) / 'venv'
        _new_venv(scratch, pip_log)
        _pip(scratch, ['install', '-q'] + wanted + _editables(), pip_log,
             'resolving the %s set' % series)
        _pip(scratch, ['check'], pip_log, 'pip check of the %s set' % series)
        lines = freeze_lines(scratch)
        version = subprocess.run(
            [str(scratch / 'bin' / 'python'), '-c',
             'import sys; print("%d.%d" % sys.version_info[:2])'],
            capture_output=True, text=True, timeout=60).stdout.strip()
        header = [
            '# The gate cloud\'s OpenStack %s: every distribution of its'
            % series,
            '# virtualenv, pinned (pip constraints). Resolved on %s with '
            'Python' % time.strftime('%Y-%m-%d'),
            '# %s by: python3 -m gate_cloud pin %s %s' % (
                version, series, ' '.join(requirements)),
            '# Re-run that (or `python3 -m gate_cloud pin %s`) to '
            're-resolve;' % series,
            '# pin nothing here by hand.',
            '%s %s' % (REQUIRES, ' '.join(requirements)),
        ]
        CONSTRAINTS.mkdir(exist_ok=True)
        target = CONSTRAINTS / ('%s.txt' % series)
        target.write_text('\n'.join(header + lines) + '\n')
        log('%s: %d distributions pinned; removing the scratch virtualenv'
            % (target, len(lines)))
    return target
