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

"""Why each compute host was or was not offered for a request.

The operator's "why did my boot fail" in one call, instead of scheduler
debug logs: a host is left out because it lacks a required trait (and which
formats it does boot), has a forbidden one, or lacks capacity.
"""

from image_type_common import image_types
from image_type_filter.diagnostics import verdicts as verdicts_mod

MAX_HOSTS_IN_REASON = 3


class Capacity:
    """Which hosts have room for each requested resource class, and what a
    host that lacks one has free: one query per class, then two reads per
    host that lacks one."""

    def __init__(self, client, resources):
        self.client = client
        self.resources = dict(resources or {})
        self.holders = {
            rc: {rp['uuid'] for rp in client.list_resource_providers(
                resources='%s:%d' % (rc, amount))}
            for rc, amount in sorted(self.resources.items())}

    def shortfalls(self, uuid):
        short = [rc for rc in sorted(self.resources)
                 if uuid not in self.holders[rc]]
        if not short:
            return []
        inventories = self.client.get_inventories(uuid)
        usages = self.client.get_usages(uuid)
        return ['lacks %s: %s' % (rc, verdicts_mod.shortfall(
            self.resources[rc], inventories.get(rc), usages.get(rc, 0)))
            for rc in short]


def no_valid_host_reason(client, survey, spec, describe_trait=None,
                         verdicts=None):
    """Why Placement offered no host at all, in one line (Nova would put
    it in the server's fault): the hosts that came closest first.
    ``verdicts``: explain()'s, when the caller has them already."""
    required = set(spec.root_required) | set(spec.required)
    for trait in sorted(required):
        fmt = image_types.FORMAT_BY_TRAIT.get(trait)
        if fmt and not any(fmt in h.formats for h in survey.hosts.values()):
            booted = sorted({f for h in survey.hosts.values()
                             for f in h.formats})
            return ('no compute host reports %s; this fleet boots %s'
                    % (trait, ', '.join(booted) or 'nothing yet'))
    if verdicts is None:
        verdicts = explain(client, survey, spec, set(), describe_trait)
    if not verdicts:
        return 'Placement knows no compute host'
    closest = sorted(verdicts, key=lambda v: (len(v.reasons), v.name))
    shown = ['%s: %s' % (v.name, '; '.join(v.reasons))
             for v in closest[:MAX_HOSTS_IN_REASON]]
    more = len(verdicts) - len(shown)
    return 'none of %d compute host(s) fits: %s%s' % (
        len(verdicts), ' | '.join(shown),
        ' | and %d more (see --explain)' % more if more else '')


def _holders(client, survey, traits):
    """Which compute hosts carry each trait: one query per non-image trait.

    Image-type traits come from the survey, which already asked per format.
    """
    holders = {}
    for trait in traits:
        fmt = image_types.FORMAT_BY_TRAIT.get(trait)
        if fmt is not None:
            holders[trait] = {h.uuid for h in survey.hosts.values()
                              if fmt in h.formats}
        else:
            holders[trait] = {rp['uuid'] for rp in
                              client.list_resource_providers(required=trait)}
    return holders


def _because(why):
    """A filter's reason after a trait: 'for KEY=VALUE ...' as it is,
    anything else in parentheses."""
    if not why:
        return ''
    return ' ' + why if why.startswith('for ') else ' (%s)' % why


def explain(client, survey, spec, candidate_uuids, describe_trait=None):
    """A Verdict per compute host, candidates first, then by name.

    Costs a fixed number of requests, plus two for each host that lacks
    capacity (its inventory and usage, to say what it has free).
    """
    describe_trait = describe_trait or (lambda trait: None)
    capacity = Capacity(client, spec.resources)
    required = set(spec.root_required) | set(spec.required)
    forbidden = set(spec.root_forbidden) | set(spec.forbidden)
    holders = _holders(client, survey, required | forbidden)
    verdicts = []
    for host in sorted(survey.hosts.values(), key=lambda h: h.name):
        if host.uuid in candidate_uuids:
            verdicts.append(verdicts_mod.Verdict(
                host.name, host.uuid, verdicts_mod.CANDIDATE, []))
            continue
        reasons = []
        for trait in sorted(required):
            if host.uuid in holders[trait]:
                continue
            why = describe_trait(trait)
            if image_types.is_image_type_trait(trait):
                reasons.append('lacks %s (boots: %s)' % (
                    trait, ', '.join(sorted(host.formats)) or
                    'nothing reported yet'))
            else:
                reasons.append('lacks %s%s' % (trait, _because(why)))
        for trait in sorted(forbidden):
            if host.uuid not in holders[trait]:
                continue
            why = describe_trait(trait)
            reasons.append('has forbidden %s%s' % (trait, _because(why)))
        reasons.extend(capacity.shortfalls(host.uuid))
        if not reasons:
            reasons.append('left out by Placement for another constraint '
                           '(nested or shared resources)')
        verdicts.append(verdicts_mod.Verdict(
            host.name, host.uuid, verdicts_mod.EXCLUDED, reasons))
    verdicts.sort(key=lambda v: (v.result != verdicts_mod.CANDIDATE, v.name))
    return verdicts
