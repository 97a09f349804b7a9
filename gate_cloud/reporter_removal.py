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

"""The reporters removed: each stopped, then ``virt-capabilities remove``.

As ``doc/source/install/upgrade.rst`` says (a test holds its list and
``STEPS`` equal): every reporter is stopped, then runs ``remove`` with the
config files it ran with. Then no trait a reporter set is left on any
provider, and every other trait (nova-compute's own) is exactly as before.
What the reporters set is read from the cloud's own config (each
compute's ``[virt_capabilities] custom_traits``, the reserved Ironic
node's reserved trait), not from the reporter. The ironic node's reporter
removes its trait from the Ironic node, where it wrote it; nova-compute
then copies the node's traits to the provider at its next update, so the
check waits for that (bounded by the gate's start deadline).

Placement keeps trait definitions: the reserved CUSTOM trait the
reporters and nova-scheduler created stays defined, unused, after the
removal; deleting it is the operator's choice (``openstack trait
delete``) once no image, flavor or aggregate names it. The phase checks
it is still defined, and that an image requiring it now finds no host.
"""

import time

from gate_cloud import boot_cases
from gate_cloud import boots
from gate_cloud import layout
from gate_cloud import processes
from gate_cloud import rest
from gate_cloud.processes import GateError
from gate_cloud.services import ironic
from gate_cloud.services import ironic_compute
from gate_cloud.services import placement
from gate_cloud.services import reporters

#: (title, action, an operator's step: in the documented order).
STEPS = (
    ('Before: record every provider\'s traits', 'before', False),
    ('Stop every reporter', 'stop', True),
    ('Run virt-capabilities remove with the config files each reporter '
     'ran with', 'remove', True),
    ('After: no reporter\'s trait left, nova-compute\'s untouched, the '
     'trait definitions kept', 'after', False),
)


def log(msg):
    print('[reporters %s] %s' % (time.strftime('%H:%M:%S'), msg),
          flush=True)


def reporters_traits(computes):
    """{provider: traits a reporter set}: each compute's configured custom
    traits, and the reserved trait of the reserved Ironic node (whose
    provider is named by the node's uuid)."""
    theirs = {c['provider']: set(c['custom_traits']) for c in computes}
    theirs.setdefault(ironic.NODES[ironic.RESERVED_NODE], set()).add(
        layout.RESERVED_TRAIT)
    return theirs


def expected_after(before, computes):
    """Every provider's traits once the reporters are gone: before, minus
    what a reporter set on it."""
    theirs = reporters_traits(computes)
    return {provider: sorted(set(traits) - theirs.get(provider, set()))
            for provider, traits in before.items()}


def compare(expected, after):
    """{provider: {'left': [...], 'lost': [...]}} of every difference."""
    out = {}
    for provider in sorted(set(expected) | set(after)):
        want, have = set(expected.get(provider, ())), set(
            after.get(provider, ()))
        if want != have:
            out[provider] = {'left': sorted(have - want),
                             'lost': sorted(want - have)}
    return out


class Removal:

    def __init__(self, ctx, cloud):
        self.ctx = ctx
        self.cloud = cloud
        self.before = {}
        self.checks = {}
        self.boots = []

    def before_removal(self):
        self.before = rest.all_traits(self.ctx.admin)
        for provider, traits in reporters_traits(
                self.cloud['computes']).items():
            missing = traits - set(self.before.get(provider, ()))
            if missing:
                raise GateError('before the removal %s lacks %s' % (
                    provider, sorted(missing)))

    def stop(self):
        reporters.stop(self.ctx)
        processes.stop(ironic_compute.REPORTER)
        names = [reporters.process_name(c['host'])
                 for c in self.cloud['computes']]
        for name in names + [ironic_compute.REPORTER]:
            if processes.pid_of(name):
                raise GateError('%s still runs' % name)

    def remove(self):
        codes = {}
        for c in self.cloud['computes']:
            key = reporters.series_key(self.ctx, c['host'])
            codes[c['host']] = self._remove(
                c['host'], key, ['--config-file', c['nova_conf'],
                                 '--config-file',
                                 reporters.conf_path(c['host'])],
                c['reporter_log'])
        codes[ironic_compute.HOST] = self._remove(
            ironic_compute.HOST, ironic_compute.NAME, [
                '--config-file', ironic_compute.conf_path(),
                '--config-file', ironic_compute.reporter_conf_path(),
                '--provider', ironic.NODES[ironic.RESERVED_NODE]],
            ironic_compute.reporter_log())
        self.checks['remove exit codes'] = codes

    def _remove(self, host, key, args, log_path):
        """``virt-capabilities remove`` as the reporter of ``host`` ran
        (its series, its config files, its provider)."""
        code, output = processes.run_for_status(
            'virt-capabilities remove (%s)' % host,
            [self.ctx.bin(key, 'virt-capabilities'), 'remove'] + args,
            env=self.ctx.env(key), timeout=300, log=log_path)
        if code != 0:
            raise GateError('virt-capabilities remove on %s exited %d: %s'
                            % (host, code, output.strip()[-300:]))
        return code

    def after(self):
        expected = expected_after(self.before, self.cloud['computes'])
        reserved = ironic.NODES[ironic.RESERVED_NODE]
        left = set(ironic.node_traits(ironic.client(self.ctx), reserved)) \
            & {layout.RESERVED_TRAIT}
        if left:
            raise GateError('the Ironic node %s still has %s' % (
                ironic.RESERVED_NODE, sorted(left)))
        # nova-compute copies the node's traits to its provider at its
        # next update: wait for the providers to match, then judge.
        try:
            processes.wait_for(
                'providers as expected after the removal',
                lambda: not compare(expected,
                                    rest.all_traits(self.ctx.admin)),
                log=ironic_compute.log_file())
        except GateError:
            pass
        differences = compare(expected, rest.all_traits(self.ctx.admin))
        self.checks['differences'] = differences
        if differences:
            raise GateError('after the removal: %s' % differences)
        trait = self.cloud['reserved_trait']
        try:
            self.ctx.admin.get(placement.URL + '/traits/%s' % trait,
                               headers=rest.PLACEMENT_HEADERS)
        except rest.HTTPError as exc:
            raise GateError('the trait definition %s went with the '
                            'reporters (%s)' % (trait, exc.code)) from None
        self.checks['definition kept'] = trait
        # Nothing carries the reserved trait now: an image requiring it
        # finds no host.
        case = boot_cases.Case('reserved', boots.upload_image(
            self.ctx.admin, 'removal-reserved', 'raw',
            self.cloud['image_files']['raw'],
            {'trait:%s' % trait: 'required'}), frozenset())
        client = rest.Client('admin', self.ctx.admin.password)
        record = boot_cases.boot_once(client, case, 'removal-reserved')
        self.boots.append(record)
        if record.status != 'ERROR':
            raise GateError('an image requiring %s %s after the reporters '
                            'went' % (trait, 'landed on %s' % record.host
                                      if record.host else record.error))
        self.checks['reserved boot'] = record.status
        # And nova-compute's next update puts nothing back.
        differences = compare(expected, rest.all_traits(self.ctx.admin))
        if differences:
            raise GateError('after the removal and a boot: %s'
                            % differences)


ACTIONS = {'before': 'before_removal', 'stop': 'stop', 'remove': 'remove',
           'after': 'after'}


def titles(operator_only=False):
    return [title for title, _, operator in STEPS
            if operator or not operator_only]


def run(ctx, cloud):
    started = time.monotonic()
    removal = Removal(ctx, cloud)
    timings, error = [], None
    for n, (title, action, _) in enumerate(STEPS, 1):
        log('step %d: %s' % (n, title))
        t0 = time.monotonic()
        try:
            getattr(removal, ACTIONS[action])()
        except GateError as exc:
            error = 'step %d (%s): %s' % (n, title, exc)
            log('FAILED: %s' % error)
            break
        finally:
            timings.append({'step': title,
                            'seconds': round(time.monotonic() - t0, 1)})
    lost = {p: d['lost'] for p, d in removal.checks.get(
        'differences', {}).items() if d['lost']}
    return {'error': error, 'seconds': round(time.monotonic() - started),
            'steps': timings, 'checks': removal.checks,
            'traits_lost': lost,
            'boots': {'attempted': len(removal.boots),
                      'failed': sum(1 for r in removal.boots
                                    if r.status != 'ERROR')}}


def verdict(figures):
    return [figures['error']] if figures.get('error') else []
