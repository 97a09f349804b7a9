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

"""The service control: a request is never lost, whenever it comes."""

import signal
import threading

import pytest

from image_type_common import control as control_mod
from tests import helpers


@pytest.fixture
def control():
    return control_mod.Control()


def waiter(control, **kwargs):
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault(
        'woken', control.wait(3600, **kwargs)))
    thread.start()
    return thread, result


def test_a_request_made_before_the_wait_is_not_lost(control):
    control.stop()  # e.g. SIGTERM during a sync
    assert control.wait(3600) is True


@pytest.mark.parametrize('request_name', ['stop', 'reload'])
def test_a_request_during_the_wait_ends_it(control, request_name):
    thread, result = waiter(control)
    getattr(control, request_name)()
    thread.join(helpers.SAFETY_TIMEOUT)
    assert result == {'woken': True}


def test_reload_is_taken_once(control):
    control.reload()
    assert control.take_reload() is True
    assert control.take_reload() is False
    assert control.wait(0) is False


def test_a_back_off_ignores_reload_but_raises_on_stop(control):
    control.reload()
    control.sleep(0)  # a reload does not cut a back-off short
    done = {}

    def back_off():
        try:
            control.sleep(3600)
        except control_mod.Stopping:
            done['stopped'] = True
    thread = threading.Thread(target=back_off)
    thread.start()
    control.stop()
    thread.join(helpers.SAFETY_TIMEOUT)
    assert done == {'stopped': True}


def test_many_rings_never_block(control):
    for _ in range(100000):  # far more than a pipe buffer holds
        control.reload()
    assert control.wait(3600) is True


def test_a_stop_inside_a_shielded_block_is_honoured_as_it_ends(monkeypatch):
    """A Placement write and the record of what it set are one step: a
    signal between them would leave a trait the state never learns of."""
    ctl = control_mod.Control()
    monkeypatch.setattr(control_mod, '_installed', ctl)
    steps = []
    with pytest.raises(control_mod.Stopping):
        with ctl.interruptible():
            with control_mod.shielded():
                steps.append('written')
                ctl.stop(interrupt=True, signum=signal.SIGTERM)  # a handler
                steps.append('recorded')
    assert steps == ['written', 'recorded']


def test_outside_a_shielded_block_a_stop_cuts_at_once(monkeypatch):
    ctl = control_mod.Control()
    monkeypatch.setattr(control_mod, '_installed', ctl)
    steps = []
    with pytest.raises(control_mod.Stopping):
        with ctl.interruptible():
            steps.append('written')
            ctl.stop(interrupt=True, signum=signal.SIGTERM)
            steps.append('recorded')
    assert steps == ['written']
