"""Why each compute host was or was not offered for a request.

The operator's "why did my boot fail" in one call, instead of scheduler
debug logs: a host is left out because it lacks a required trait (and which
formats it does boot), has a forbidden one, or lacks capacity.
"""

import dataclasses

from image_type_common import image_types

CANDIDATE, EXCLUDED = 'candidate', 'excluded'


@dataclasses.dataclass
class Verdict:
    name: str
    uuid: str
    result: str
    reasons: list


def _capacity_filter(resources):
    return ','.join('%s:%d' % (rc, n) for rc, n in sorted(resources.items()))


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


def explain(client, survey, spec, candidate_uuids, describe_trait=None):
    """A Verdict per compute host, candidates first, then by name.

    Costs a fixed number of requests however many hosts were left out.
    """
    describe_trait = describe_trait or (lambda trait: None)
    with_capacity = None
    if spec.resources:
        with_capacity = {rp['uuid'] for rp in client.list_resource_providers(
            resources=_capacity_filter(spec.resources))}
    required = set(spec.root_required) | set(spec.required)
    forbidden = set(spec.root_forbidden) | set(spec.forbidden)
    holders = _holders(client, survey, required | forbidden)
    verdicts = []
    for host in sorted(survey.hosts.values(), key=lambda h: h.name):
        if host.uuid in candidate_uuids:
            verdicts.append(Verdict(host.name, host.uuid, CANDIDATE, []))
            continue
        reasons = []
        for trait in sorted(required):
            if host.uuid in holders[trait]:
                continue
            why = describe_trait(trait)
            if image_types.is_owned_trait(trait):
                reasons.append('lacks %s (boots: %s)' % (
                    trait, ', '.join(sorted(host.formats)) or
                    'nothing reported yet'))
            else:
                reasons.append('lacks %s%s' % (trait, ' (%s)' % why
                                               if why else ''))
        for trait in sorted(forbidden):
            if host.uuid not in holders[trait]:
                continue
            why = describe_trait(trait)
            reasons.append('has forbidden %s%s' % (trait, ' (%s)' % why
                                                   if why else ''))
        if with_capacity is not None and host.uuid not in with_capacity:
            reasons.append('lacks capacity for %s'
                           % _capacity_filter(spec.resources))
        if not reasons:
            reasons.append('left out by Placement for another constraint '
                           '(nested or shared resources)')
        verdicts.append(Verdict(host.name, host.uuid, EXCLUDED, reasons))
    verdicts.sort(key=lambda v: (v.result != CANDIDATE, v.name))
    return verdicts
