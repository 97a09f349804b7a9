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

"""The figures of the phases that change the cloud, in the run's summary.

Each phase (the upgrade, the rollback, the reporters' removal) returns
its figures in run.json; this reads them back into one table: how long
the phase took, the boots it made and how many failed, the boots refused
while a service restarted (counted apart, per service: they fail nothing
when the service is one whose restart may refuse a boot), and the traits
lost.
"""

#: The phases with figures, in the order they run.
PHASES = ('upgrade', 'rollback', 'reporter-removal')


def row(name, figures):
    """(phase, seconds, attempted, failed, refused, traits lost)."""
    stream = figures.get('stream') or {}
    boots = figures.get('boots') or {}
    probes = figures.get('probes') or {}
    attempted = stream.get('attempted', 0) + boots.get('attempted', 0) + \
        probes.get('attempted', 0)
    failed = stream.get('failed', 0) + boots.get('failed', 0) + \
        probes.get('failed', 0)
    refused = stream.get('refused') or {}
    lost = figures.get('traits_lost') or {}
    return (name, figures.get('seconds'), attempted, failed,
            ', '.join('%s %d' % item for item in sorted(refused.items()))
            or '0',
            sum(len(_flat(v)) for v in lost.values()))


def _flat(lost):
    """A provider's lost traits: a list, or {where: list}."""
    if isinstance(lost, dict):
        return {t for traits in lost.values() for t in traits}
    return set(lost)


def table(results):
    header = ('phase', 'seconds', 'boots', 'failed',
              'refused during a restart', 'traits lost')
    rows = [header] + [tuple(str(v) for v in row(name, results[name]))
                       for name in PHASES if name in results]
    if len(rows) == 1:
        return '(no phase ran)'
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return '\n'.join('  '.join(cell.ljust(w) for cell, w in zip(r, widths,
                                                             strict=True))
                     .rstrip() for r in rows)
