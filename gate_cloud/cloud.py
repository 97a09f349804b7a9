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

"""``prepare``, ``up``, ``down``: the services of ``SERVICES``, in order.

``up`` takes each service through its steps (``configure``, ``bootstrap``,
``start``, ``wait``, ``populate``: ``gate_cloud/services/__init__.py``) as
soon as the services it ``NEEDS`` are up, several at once; ``down`` stops
them the other way round, each only after whatever needs it. Everything
started is recorded by pid; any failure during ``up`` stops what was
started and puts back the system files changed, then fails with one line
naming the part.
"""

import concurrent.futures
import shutil
import threading
import time

from gate_cloud import content
from gate_cloud import context
from gate_cloud import layout
from gate_cloud import preflight
from gate_cloud import processes
from gate_cloud import series as series_mod
from gate_cloud.processes import GateError
from gate_cloud.services import glance
from gate_cloud.services import ironic
from gate_cloud.services import ironic_compute
from gate_cloud.services import keystone
from gate_cloud.services import libvirt
from gate_cloud.services import mariadb
from gate_cloud.services import network_standin
from gate_cloud.services import nova_api
from gate_cloud.services import nova_compute
from gate_cloud.services import nova_conductor
from gate_cloud.services import nova_scheduler
from gate_cloud.services import placement
from gate_cloud.services import rabbitmq
from gate_cloud.services import reporters

#: The cloud, in the order it comes up (each after what it ``NEEDS``).
SERVICES = (
    mariadb,
    rabbitmq,
    keystone,
    placement,
    glance,
    ironic,
    network_standin,
    libvirt,
    nova_api,
    nova_conductor,
    nova_scheduler,
    nova_compute,
    ironic_compute,
    reporters,
)
#: Each service's steps on the way up, in order (each optional but
#: ``start`` and ``wait``).
UP_STEPS = ('configure', 'bootstrap', 'start', 'wait', 'populate')
#: A run's results, kept in previous/ when the next cloud starts.
RESULTS = ('run.json', 'figures.json')


def log(msg):
    print('[gate %s] %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


def ports():
    """{label: port} of every service; a port named twice is a bug."""
    out = {}
    for svc in SERVICES:
        for label, port in svc.PORTS.items():
            if port in out.values() or label in out:
                raise GateError('port %s:%d (%s) is claimed twice'
                                % (layout.HOST, port, label))
            out[label] = port
    return out


def debian_packages():
    return sorted({pkg for svc in SERVICES for pkg in svc.DEBIAN})


def pypi_packages():
    """What every series' virtualenv holds besides the editable installs:
    each service's ``PYPI`` and the clients."""
    return sorted({pkg for svc in SERVICES for pkg in svc.PYPI}
                  | set(series_mod.TOOLS))


def current():
    """The cloud ``up`` made (its credentials and series)."""
    return context.Cloud.load(SERVICES)


def already_up():
    return any(processes.alive(r['pid']) for r in processes.records())


def fresh_state():
    """Wipe the last cloud's state; the install logs and the last run's
    results (moved to previous/) stay."""
    if layout.STATE.exists():
        previous = layout.path('previous')
        for name in RESULTS:
            if layout.path(name).exists():
                previous.mkdir(exist_ok=True)
                layout.path(name).replace(previous / name)
        for entry in layout.STATE.iterdir():
            if entry.name.startswith('apt') or entry.name.startswith('pip') \
                    or entry.name == 'previous':
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    layout.STATE.mkdir(mode=0o700, exist_ok=True)
    for sub in ('logs', 'tmp'):
        layout.path(sub).mkdir(exist_ok=True)


def prepare(series=None):
    """Install what is missing: the Debian packages, and the virtualenv of
    each series (the newest if none is named). CI runs this beside the
    other builds."""
    preflight.ensure_debian_packages(log, debian_packages())
    for one in series or [series_mod.newest()]:
        series_mod.ensure_venv(one, pypi_packages(), log)


def up(series=None):
    """Bring the cloud up, every service from ``series`` (the newest
    pinned one if None); returns the cloud.json dict."""
    started = time.monotonic()
    series = series or series_mod.newest()
    series_mod.constraints_file(series)  # an unknown series: refused now
    if already_up():
        raise GateError('a cloud from %s is already running; run '
                        '`python3 -m gate_cloud down` first' % layout.STATE)
    processes.check_ports_free(ports())
    prepare([series])
    processes.check_ports_free(ports())
    # A crashed cloud's system files, put back before its backups go.
    failed = _teardown(context.Cloud(SERVICES))
    if failed:
        raise GateError('cleaning up after the last cloud: %s'
                        % '; '.join(failed))
    fresh_state()
    cloud = context.Cloud.new(SERVICES, series)
    log('bringing up OpenStack %s on %s' % (series, layout.HOST))
    try:
        _walk_up(cloud)
        log('flavors, image files, cloud.json')
        description = content.make(cloud)
    except BaseException:
        down(quiet=True)
        raise
    log('cloud up in %.0f s' % (time.monotonic() - started))
    return description


def _walk_up(cloud):
    """Each service through UP_STEPS once what it NEEDS is up, several at
    once; the first failure stops the walk (the others finish their step
    or give up at once) and is raised."""
    names = {svc.NAME for svc in SERVICES}
    for svc in SERVICES:
        unknown = set(svc.NEEDS) - names
        if unknown:
            raise GateError('%s needs %s, which is no service of the cloud'
                            % (svc.NAME, ', '.join(sorted(unknown))))
    done, pending, running = set(), list(SERVICES), {}
    with concurrent.futures.ThreadPoolExecutor(len(SERVICES)) as pool:
        try:
            while pending or running:
                for svc in [s for s in pending if set(s.NEEDS) <= done]:
                    pending.remove(svc)
                    running[pool.submit(_up_one, cloud, svc)] = svc
                if not running:
                    raise GateError('services waiting on each other: %s'
                                    % ', '.join(s.NAME for s in pending))
                finished, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in finished:
                    svc = running.pop(future)
                    future.result()
                    done.add(svc.NAME)
        except BaseException:
            processes.CANCEL.set()
            raise
        finally:
            pool.shutdown(wait=True)
            processes.CANCEL.clear()


def _up_one(cloud, svc):
    started = time.monotonic()
    log('%s: starting' % svc.NAME)
    for step in UP_STEPS:
        if processes.CANCEL.is_set():
            raise GateError('%s: start-up cancelled' % svc.NAME)
        function = getattr(svc, step, None)
        if function is not None:
            function(cloud)
    log('%s: up in %.0f s' % (svc.NAME, time.monotonic() - started))


def _stop_waves():
    """SERVICES in waves to stop: each wave once nothing still running
    needs it, the last ones first."""
    remaining, waves = list(SERVICES), []
    while remaining:
        needed = {need for svc in remaining for need in svc.NEEDS}
        wave = [svc for svc in remaining if svc.NAME not in needed]
        if not wave:  # a cycle: the rest in reverse order
            wave = [remaining[-1]]
        waves.append(wave)
        remaining = [svc for svc in remaining if svc not in wave]
    return waves


def down(quiet=False):
    """Stop every service (by pid), anything else recorded, put system
    files back, clear the cloud's temporary files."""
    if not quiet:
        log('stopping the cloud')
    cloud = context.Cloud.load(SERVICES, missing_ok=True)
    failed = []
    lock = threading.Lock()

    def stop(svc):
        try:
            svc.stop(cloud)
        except Exception as exc:  # the rest still goes down
            with lock:
                failed.append('%s: %s' % (svc.NAME, exc))
    for wave in _stop_waves():
        with concurrent.futures.ThreadPoolExecutor(len(wave)) as pool:
            list(pool.map(stop, wave))
    processes.stop_all()
    failed += _teardown(cloud)
    shutil.rmtree(layout.path('tmp'), ignore_errors=True)
    if failed and not quiet:
        raise GateError('stopping the cloud: %s' % '; '.join(failed))
    if not quiet:
        log('cloud stopped; state and logs stay in %s' % layout.STATE)


def _teardown(cloud):
    failed = []
    for svc in reversed(SERVICES):
        function = getattr(svc, 'teardown', None)
        if function is None:
            continue
        try:
            function(cloud)
        except Exception as exc:
            failed.append('%s: %s' % (svc.NAME, exc))
    return failed
