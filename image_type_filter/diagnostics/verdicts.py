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

"""Host by host, which term of an allocation-candidates query left the
host out.

For every compute host Placement did not offer, each term of the query
(``Query.parse``), in order, and those the host fails (the terms, their
wording and what is not modelled: doc/source/admin/troubleshooting.rst,
"Why did this server find no host?"). A fixed number of requests per
term, plus two reads per host short of a resource.
"""

import dataclasses
from urllib import parse

from image_type_common import image_types
from image_type_filter.diagnostics import our_filters
from image_type_filter.diagnostics import survey

CANDIDATE, EXCLUDED = 'candidate', 'excluded'
#: The host the server runs on, judged with its own allocation given back.
FITS_WITH_OWN, EXCLUDED_WITH_OWN = 'current host, fits', \
    'current host, excluded'
#: Hosts named in a "No valid host" line.
MAX_HOSTS_IN_REASON = 3


@dataclasses.dataclass
class Verdict:
    name: str
    uuid: str
    result: str
    reasons: list


@dataclasses.dataclass
class Group:
    resources: dict = dataclasses.field(default_factory=dict)
    required: set = dataclasses.field(default_factory=set)
    forbidden: set = dataclasses.field(default_factory=set)
    #: ``in:A,B`` terms of ``required``: one of them.
    any_of: list = dataclasses.field(default_factory=list)
    member_of: list = dataclasses.field(default_factory=list)
    forbidden_aggregates: set = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class Query:
    """The terms of an allocation-candidates query string."""

    root_required: set = dataclasses.field(default_factory=set)
    root_forbidden: set = dataclasses.field(default_factory=set)
    #: suffix ('' for the unsuffixed group) -> Group.
    groups: dict = dataclasses.field(default_factory=dict)
    limit: int = None

    @classmethod
    def parse(cls, querystring):
        query = cls()
        for key, value in parse.parse_qsl(querystring):
            if key == 'limit':
                query.limit = int(value)
            elif key == 'root_required':
                _traits(value, query.root_required, query.root_forbidden)
            for param in ('resources', 'required', 'member_of'):
                if key.startswith(param):
                    _add(query.groups.setdefault(key[len(param):], Group()),
                         param, value)
        return query


def _add(group, param, value):
    if param == 'resources':
        for part in value.split(','):
            rc, _, amount = part.partition(':')
            group.resources[rc] = int(amount)
    elif param == 'member_of':
        if value.startswith('!'):
            group.forbidden_aggregates.update(
                value.lstrip('!').replace('in:', '', 1).split(','))
        else:
            group.member_of.append(value.replace('in:', '', 1).split(','))
    elif value.startswith('in:'):
        group.any_of.append(value)
    else:
        _traits(value, group.required, group.forbidden)


def _traits(value, required, forbidden):
    """``A,!B``: A into ``required``, B into ``forbidden``."""
    for trait in value.split(','):
        if trait.startswith('!'):
            forbidden.add(trait[1:])
        else:
            required.add(trait)


def _because(why):
    """What asked for a trait, after its reason: ', for KEY=VALUE ...',
    anything else in parentheses."""
    if not why:
        return ''
    return ', ' + why if why.startswith('for ') else ' (%s)' % why


class _Judge:
    """One query's judge; ``reads`` is shared by the judges of one
    request, so no listing or host is read twice."""

    def __init__(self, client, query, give_back, services, reads, why):
        self.client = client
        self.query = query
        self.give_back = give_back or {}
        self.services = services or {}
        self._reads = reads
        self.why = why or (lambda trait: None)

    def _once(self, key, read):
        if key not in self._reads:
            self._reads[key] = read()
        return self._reads[key]

    def holders(self, **filters):
        """A filtered listing of providers, read once."""
        return self._once(tuple(sorted(filters.items())),
                          lambda: survey.holders(self.client, **filters))

    def roots(self, tree=True, **filters):
        """The roots of the trees a filtered listing has a provider of
        (not ``tree``: the providers themselves)."""
        return {tree and rp.get('root_provider_uuid') or rp['uuid']
                for rp in self.holders(**filters)}

    def usage(self, uuid):
        """(inventories, usages) of one provider, read once."""
        return self._once(('usage', uuid), lambda: (
            self.client.get_inventories(uuid), self.client.get_usages(uuid)))

    def _lacks(self, host, trait):
        """After "lacks it": which formats the host boots (for an image
        type) and what asked for the trait."""
        boots = ''
        if image_types.is_image_type_trait(trait):
            boots = ' (boots: %s)' % (', '.join(sorted(host.formats)) or
                                      'nothing reported')
        return boots + _because(self.why(trait))

    def traits(self, host, param, required, forbidden, tree=False):
        """The trait terms of ``param`` (``root_required``, or the
        unsuffixed ``required``, ``tree``) the host fails."""
        reasons = ['%s %s: lacks it%s' % (param, trait,
                                          self._lacks(host, trait))
                   for trait in sorted(required)
                   if host.uuid not in self.roots(tree, required=trait)]
        for trait in sorted(forbidden):
            if host.uuid in self.roots(tree, required=trait):
                extra = ''
                if trait == 'COMPUTE_STATUS_DISABLED' and not tree:
                    # Nova's compute_status_filter forbids it on the root.
                    service = self.services.get(host.name)
                    extra = ' (its compute service is disabled%s)' % (
                        ': %s' % service if service else '')
                reasons.append('%s !%s: carries it%s%s' % (
                    param, trait, extra, _because(self.why(trait))))
        return reasons

    def _room(self, rc, amount, host):
        """Why ``amount`` of ``rc`` does not fit the host: none of it, more
        than one allocation may take, or too little free (with the
        server's own allocation given back)."""
        if host.uuid in self.roots(resources='%s:%d' % (rc, amount)):
            return None
        inventories, usages = self.usage(host.uuid)
        inventory = inventories.get(rc)
        if not inventory:
            return 'resources %s:%d: needs %d, has none' % (rc, amount, amount)
        own = self.give_back.get(host.uuid, {}).get(rc, 0)
        if own and inventory.get('reserved', 0) >= inventory['total']:
            # Nova's ironic driver reserves a node's whole inventory while
            # an instance is on it (``_node_resources_used``): on the
            # server's own node that reservation is the server's, and goes
            # with its allocation.
            inventory = dict(inventory, reserved=0)
        free = int((inventory['total'] - inventory.get('reserved', 0))
                   * inventory.get('allocation_ratio', 1.0)) \
            - usages.get(rc, 0) + own
        max_unit = inventory.get('max_unit', inventory['total'])
        if own and free >= amount and amount <= max_unit:
            return None  # fits once the server's own allocation is back
        if amount > max_unit and free >= amount:
            why = 'at most %d per allocation' % max_unit
        else:
            why = 'has %d free%s' % (free, ' with the server\'s own %d '
                                     'given back' % own if own else '')
        return 'resources %s:%d: needs %d, %s' % (rc, amount, amount, why)

    def unsuffixed(self, host):
        group = self.query.groups.get('')
        if group is None:
            return []
        reasons = [r for rc, amount in sorted(group.resources.items())
                   for r in [self._room(rc, amount, host)] if r]
        reasons += self.traits(host, 'required', group.required,
                               group.forbidden, tree=True)
        reasons += ['required %s: has none of them' % term
                    for term in group.any_of
                    if host.uuid not in self.roots(required=term)]
        for aggregates in group.member_of:
            term = 'in:' + ','.join(sorted(aggregates))
            if host.uuid not in self.roots(member_of=term):
                reasons.append('member_of %s: in none of them' % term)
        for uuid in sorted(group.forbidden_aggregates):
            if host.uuid in self.roots(member_of='in:' + uuid):
                reasons.append('member_of !in:%s: in it' % uuid)
        return reasons

    def granular(self, host):
        reasons = []
        for suffix, group in sorted(
                (s, g) for s, g in self.query.groups.items() if s):
            filters = {}
            if group.resources:
                filters['resources'] = ','.join(
                    '%s:%d' % kv for kv in sorted(group.resources.items()))
            traits = sorted(group.required) + ['!' + t for t in
                                               sorted(group.forbidden)]
            if traits:
                filters['required'] = ','.join(traits)
            if host.uuid not in self.roots(**filters):
                reasons.append('%s: no provider of the host has all of it'
                               % ' '.join('%s%s=%s' % (k, suffix, v) for k, v
                                          in sorted(filters.items())))
        return reasons

    def reasons(self, host):
        return self.traits(host, 'root_required', self.query.root_required,
                           self.query.root_forbidden) + \
            self.unsuffixed(host) + self.granular(host)


def judge(client, survey, queries, offered, give_back=None, services=None,
          current_host=None, why=None):
    """A Verdict per compute host of ``survey``, offered ones first.

    ``queries``: the request's (a host left out by each is left out, with
    the reasons of each); ``offered``: the roots offered to any;
    ``give_back``: provider uuid -> the server's own allocation;
    ``services``: host name -> why its service is disabled; ``why``: trait
    -> the rule in the request that asked for or forbade it, or None.
    """
    reads = {}
    judges = [_Judge(client, q, give_back, services, reads, why)
              for q in queries]
    labels = (['', ] if len(queries) == 1 else
              ['query %d (%s): ' % (n + 1, 'PCPU' if n == 0 else
                                    'VCPU fallback')
               for n in range(len(queries))])
    truncated = [q for q in queries
                 if q.limit is not None and len(offered) >= q.limit]
    verdicts = []
    for host in sorted(survey.hosts.values(), key=lambda h: h.name):
        if host.uuid in offered:
            verdicts.append(Verdict(host.name, host.uuid, CANDIDATE, []))
            continue
        per_query = [j.reasons(host) for j in judges]
        fits_one = any(not reasons for reasons in per_query)
        reasons = [label + reason
                   for label, found in zip(labels, per_query, strict=True)
                   for reason in found]
        if host.uuid == current_host:
            verdicts.append(Verdict(
                host.name, host.uuid,
                FITS_WITH_OWN if fits_one else EXCLUDED_WITH_OWN, reasons))
            continue
        if fits_one:
            reasons = [
                'limit=%d: Placement returned %d candidates and stopped '
                '([scheduler] max_placement_results); this host fits'
                % (truncated[0].limit, len(offered)) if truncated else
                'left out by Placement for a constraint this tool does not '
                'model (sharing providers, resources split across a tree)']
        verdicts.append(Verdict(host.name, host.uuid, EXCLUDED, reasons))
    verdicts.sort(key=lambda v: (v.result != CANDIDATE, v.name))
    return verdicts


def no_valid_host(verdicts, more=''):
    """Why Placement offered no host at all, in one line (Nova would put
    it in the server's fault): the hosts that came closest first, with
    the terms each fails (``more``: after the count of hosts not shown)."""
    if not verdicts:
        return 'Placement knows no compute host'
    closest = sorted(verdicts, key=lambda v: (len(v.reasons), v.name))
    shown = ['%s: %s' % (v.name, '; '.join(v.reasons))
             for v in closest[:MAX_HOSTS_IN_REASON]]
    hidden = len(verdicts) - len(shown)
    return 'none of %d compute host(s) fits: %s%s' % (
        len(verdicts), ' | '.join(shown),
        ' | and %d more%s' % (hidden, more) if hidden else '')


def no_valid_host_reason(client, survey, spec, verdicts=None):
    """``no_valid_host`` for a request spec of this project's own, first
    saying so when no compute host reports the image's format.
    ``verdicts``: ``judge``'s, when the caller has them already."""
    for trait in sorted(set(spec.root_required) | set(spec.required)):
        fmt = image_types.FORMAT_BY_TRAIT.get(trait)
        if fmt and not any(fmt in h.formats for h in survey.hosts.values()):
            booted = sorted({f for h in survey.hosts.values()
                             for f in h.formats})
            return ('no compute host reports %s; this fleet boots %s'
                    % (trait, ', '.join(booted) or 'nothing yet'))
    if verdicts is None:
        query = Query.parse(our_filters.build(spec))
        verdicts = judge(client, survey, [query], set())
    return no_valid_host(verdicts, ' (see --explain)')
