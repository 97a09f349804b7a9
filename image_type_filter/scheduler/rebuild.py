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

"""Can a host take a rebuild's new image? The check Nova skips.

nova-scheduler runs no request filter on a rebuild with a new image, only
host filters with ``RUN_ON_REBUILD``. This runs the same request filters on
a scratch copy of the request (``RequestFilterPipeline.outcome``) and
compares what they would require and forbid with the one host's traits,
read only when there is something to compare. Nova-free, so the default
test run covers what nova-scheduler runs.
"""


def refusal(pipeline, request_spec, host_traits):
    """Why this host cannot take the rebuild, or None when it can.

    ``host_traits()`` returns the host's traits (one Placement read); it is
    called only when the filters ask for or forbid something.
    """
    outcome = pipeline.outcome(None, request_spec, keep_constraints=False)
    if outcome.refusal is not None:
        return outcome.refusal
    added = outcome.added
    required = set(added.get('root_required', ())) | set(
        added.get('required', ()))
    forbidden = set(added.get('root_forbidden', ())) | set(
        added.get('forbidden', ()))
    if not required and not forbidden:
        return None
    traits = host_traits()
    lacking, unwanted = sorted(required - traits), sorted(forbidden & traits)
    if not lacking and not unwanted:
        return None
    parts = []
    if lacking:
        parts.append('the new image needs %s' % ', '.join(lacking))
    if unwanted:
        parts.append('the host has %s, which the new image must not meet'
                     % ', '.join(unwanted))
    return '; '.join(parts)
