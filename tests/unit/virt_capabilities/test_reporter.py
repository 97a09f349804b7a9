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

"""A stop from a signal ends a sync at once, except between a provider's
write and the record of what it set (``service``'s docstring)."""

import signal

import pytest

from image_type_common import control as control_mod
from image_type_common import exceptions
from virt_capabilities import ownership
from virt_capabilities import ownership_state
from virt_capabilities import reporter as reporter_mod

U1 = '7d1a5f0e-2b3c-4d5e-8f90-a1b2c3d4e5f6'
U2 = '0c9a1b2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d'


class StoppedMidWrite:
    """A store whose first write is where SIGTERM's handler runs: after
    the request is sent, before its answer."""

    kind = 'provider'
    outcome_unknown = (exceptions.PlacementUnavailable,)

    def __init__(self, control, events):
        self.control = control
        self.events = events
        self.traits = {U1: set(), U2: set()}

    def read(self, uuid):
        return sorted(self.traits[uuid]), 1

    def write(self, uuid, traits, generation):
        self.events.append(('sent', uuid))
        self.control.stop(interrupt=True, signum=signal.SIGTERM)
        self.traits[uuid] = set(traits)
        self.events.append(('answered', uuid))

    def create_trait(self, name):
        pass


@pytest.fixture
def control(monkeypatch):
    ctl = control_mod.Control()
    monkeypatch.setattr(control_mod, '_installed', ctl)
    return ctl


def test_a_stop_during_a_write_lets_its_record_finish_then_ends_the_sync(
        tmp_path, control):
    events = []
    state = ownership_state.OwnershipState(str(tmp_path / 'state.json'),
                                           name='r')
    record = state.record

    def recorded(uuid, traits):
        record(uuid, traits)
        events.append(('recorded', uuid))
    state.record = recorded
    store = StoppedMidWrite(control, events)
    reporter = reporter_mod.Reporter(
        object(), ownership.OwnerRule(custom=frozenset({'CUSTOM_A'})), state,
        store=store)
    with pytest.raises(control_mod.Stopping):
        with control.interruptible():
            reporter.sync([U1, U2])
    # Recorded ahead, written, answered, the record narrowed: then the
    # stop; U2 never started.
    assert events == [('recorded', U1), ('sent', U1), ('answered', U1),
                      ('recorded', U1)]
    assert store.traits == {U1: {'CUSTOM_A'}, U2: set()}
    # What was written is recorded, so a later run can remove it.
    assert ownership_state.OwnershipState(
        str(tmp_path / 'state.json'), name='r').owned(U1) == {'CUSTOM_A'}
