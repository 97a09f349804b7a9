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

"""``candidates --disk-format``'s explanations: its query, judged host by
host by ``verdicts``, and why no host at all was offered.
"""

from image_type_common import image_types
from image_type_filter.diagnostics import verdicts as verdicts_mod


def query(spec, querystring=None):
    """The query to judge: the one sent, else (a request filter refused
    the request before Placement was asked) the terms of ``spec``."""
    if querystring:
        return verdicts_mod.Query.parse(querystring)
    return verdicts_mod.Query(
        root_required=set(spec.root_required),
        root_forbidden=set(spec.root_forbidden),
        groups={'': verdicts_mod.Group(
            resources=dict(spec.resources), required=set(spec.required),
            forbidden=set(spec.forbidden))})


def explain(client, survey, spec, candidate_uuids, describe_trait=None,
            querystring=None):
    """A Verdict per compute host, candidates first, then by name
    (``describe_trait``: trait -> the filter rule that asked for it)."""
    return verdicts_mod.judge(client, survey, [query(spec, querystring)],
                              set(candidate_uuids), why=describe_trait)


def no_valid_host_reason(client, survey, spec, verdicts=None):
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
        verdicts = explain(client, survey, spec, set())
    return verdicts_mod.no_valid_host(verdicts, ' (see --explain)')
