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

"""Many requests at once through one set of request filters, as
nova-scheduler runs them on native threads (Nova 33 and later), against a
real Placement, while a reserved trait appears on a host.

Nothing here waits on time: threads meet at barriers and events, and a
read is held open by the test's own adapter until the test releases it.
"""

import logging
import threading
import uuid

from image_type_common import placement_client
from image_type_filter import exceptions
from image_type_filter import settings
from image_type_filter.diagnostics import our_filters
from image_type_filter.scheduler import pipeline as filter_pipeline
from placement_runner import writes

GUARD = 120  # seconds: only a broken test ever waits this long
ASSOCIATED = '/traits?associated=true'


class HeldAdapter:
    """The real adapter, counting ``GET /traits?associated=true``; with
    ``hold_next`` the next such read gets Placement's answer and then waits
    for ``release`` before handing it back."""

    def __init__(self, adapter, appeared=None):
        self.adapter = adapter
        self.appeared = appeared or threading.Event()
        self.lock = threading.Lock()
        self.associated_reads = 0
        self.after_appearance = 0
        self.hold_next = False
        self.answered = threading.Event()
        self.release = threading.Event()

    def request(self, path, method, **kwargs):
        hold = False
        if method == 'GET' and path == ASSOCIATED:
            with self.lock:
                self.associated_reads += 1
                self.after_appearance += self.appeared.is_set()
                hold, self.hold_next = self.hold_next, False
        resp = self.adapter.request(path, method, **kwargs)
        if hold:
            self.answered.set()
            assert self.release.wait(GUARD)
        return resp


def host_with(placement, traits):
    client = placement.client()
    uuid_ = str(uuid.uuid4())
    writes.create_resource_provider(client, 'concurrent-%s' % uuid_[:8], uuid_)
    add_traits(client, uuid_, traits)
    return uuid_


def add_traits(client, host, traits):
    current, generation = client.get_provider_traits(host)
    client.put_provider_traits(host, set(current) | set(traits), generation)


def filters(adapter, reserved, image_type=True):
    client = placement_client.PlacementClient(adapter)
    return filter_pipeline.RequestFilterPipeline.from_settings(
        settings.FilterSettings.defaults(
            image_type_enabled=image_type, isolation_enabled=True,
            isolation_rules=(reserved,), traits_refresh_interval=3600.0),
        placement=client)


def tagged(reserved, disk_format='raw'):
    return our_filters.RequestSpec.for_boot(
        disk_format, extra_specs={'trait:%s' % reserved: 'required'})


def outcome(pipeline, spec):
    try:
        pipeline(None, spec)
    except exceptions.NoValidHost as exc:
        return 'refused: %s' % exc
    return spec


def test_a_slow_old_answer_never_hides_a_trait_a_newer_one_saw(placement,
                                                                unique):
    reserved = 'CUSTOM_RSV_%s' % unique.upper()
    adapter = HeldAdapter(placement.adapter())
    # Isolation alone: the read held is the one about the reserved trait.
    pipeline = filters(adapter, reserved, image_type=False)
    host = host_with(placement, {'COMPUTE_IMAGE_TYPE_RAW'})
    results = {}

    adapter.hold_next = True
    first = threading.Thread(
        target=lambda: results.setdefault('first', outcome(
            pipeline, tagged(reserved))))
    first.start()
    # The first request's read has Placement's answer: nobody carries it.
    assert adapter.answered.wait(GUARD)
    add_traits(placement.client(), host, {reserved})
    second = outcome(pipeline, tagged(reserved))
    assert reserved in second.root_required
    adapter.release.set()
    first.join(GUARD)
    # The old answer came back last and changed nothing: the first request
    # too is placed on the newest answer, and the next asks nothing.
    assert not isinstance(results['first'], str), results['first']
    assert reserved in results['first'].root_required
    reads = adapter.associated_reads
    third = outcome(pipeline, tagged(reserved))
    assert reserved in third.root_required
    assert adapter.associated_reads == reads


def test_many_requests_at_once_while_a_reserved_trait_appears(
        placement, unique, caplog):
    threads, after_each = 8, 6
    reserved = 'CUSTOM_RSV_%s' % unique.upper()
    odd_format = 'odd-%s' % unique
    appeared = threading.Event()
    adapter = HeldAdapter(placement.adapter(), appeared)
    pipeline = filters(adapter, reserved)
    host = host_with(placement, {'COMPUTE_IMAGE_TYPE_RAW'})
    start = threading.Barrier(threads + 1)
    lock = threading.Lock()
    done_before = threading.Event()
    seen = []  # (started after the trait appeared, request, outcome)
    errors = []

    def run(index):
        start.wait(GUARD)
        after = 0
        n = 0
        while after < after_each:
            n += 1
            late = appeared.is_set()
            spec = (tagged(reserved) if n % 3 else
                    our_filters.RequestSpec.for_boot(odd_format if index % 2
                                                     else 'raw'))
            try:
                result = outcome(pipeline, spec)
            except Exception as exc:  # noqa: BLE001 - the test's verdict
                errors.append(exc)
                return
            with lock:
                seen.append((late, spec, result))
                if len(seen) >= 2 * threads:
                    done_before.set()
            after += late

    workers = [threading.Thread(target=run, args=(i,))
               for i in range(threads)]
    with caplog.at_level(logging.WARNING):
        for worker in workers:
            worker.start()
        start.wait(GUARD)
        assert done_before.wait(GUARD)
        add_traits(placement.client(), host, {reserved})
        appeared.set()
        for worker in workers:
            worker.join(GUARD)
    assert errors == []
    late = [(spec, result) for was_late, spec, result in seen if was_late]
    assert len(late) >= threads * after_each
    for spec, result in late:
        assert not isinstance(result, str), result
        if spec.flavor.extra_specs:
            assert reserved in result.root_required
        else:
            assert reserved in result.root_forbidden
    early = [result for was_late, spec, result in seen
             if not was_late and spec.flavor.extra_specs]
    assert early and all(isinstance(r, str) or reserved in r.root_required
                         for r in early)
    # A read is made only by a request whose cached answer said "nobody":
    # once one read that began after the trait appeared has answered, none
    # follows, so at most one per thread began after it.
    assert adapter.after_appearance <= threads
    odd = [r for r in caplog.records if odd_format in r.getMessage()]
    assert len(odd) == 1
