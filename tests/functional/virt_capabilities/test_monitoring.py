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

"""The monitoring page's command lines, run as written against the status file
a real reporter wrote (doc/source/admin/monitoring.rst): the Nagios/Icinga
check, the node_exporter textfile writer (its output parsed by Prometheus's
own client library; the alerting rules parsed as PromQL, and every metric
they name written by it), and ``report --check`` as a periodic check,
through a sync that succeeds, drift, a sync that fails, a reporter that
stopped and a file that is not there. And the page's tables of log lines
against the lines the reporter (service and one-shot) writes when run and
made to fail (the request filters' and ``status``'s:
tests/functional/image_type_filter/test_alert_lines.py).

Only the paths change: the page's nova.conf, status file and textfile
directory become this test's. The scripts come from contrib/monitoring, put
on PATH as the page asks.
"""

import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys

from prometheus_client import parser as prometheus_parser
import promql_parser
import pytest

from placement_runner import writes
from tests import helpers
from tests import monitoring_page

SCRIPTS = os.path.join(helpers.REPO, 'contrib', 'monitoring')
CONF, STATUS, TEXTFILE_DIR = ('/etc/nova/nova.conf',
                              '/var/lib/nova/virt_capabilities_status.json',
                              '/var/lib/prometheus/node-exporter')
NAGIOS = 'check_virt_capabilities_status'
TEXTFILE = 'virt_capabilities_status_textfile'
CHECK = 'virt-capabilities report --config-file %s --check' % CONF
# Nagios's plugin exit codes: literal, not the scripts'.
OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
DRIFT = 3  # report --check



def lines_by_kind():
    """The page's lines, by what they run; each kind is run below."""
    kinds = {}
    for line in monitoring_page.console_lines():
        kind = CHECK if line.startswith(CHECK) else line.split()[0]
        kinds.setdefault(kind, []).append(line)
    assert sorted(kinds) == sorted([NAGIOS, TEXTFILE, CHECK, 'sh']), \
        'a command line on the page this test does not run: %s' % kinds
    [wrapped] = kinds.pop('sh')
    assert CHECK in wrapped
    kinds = {k: v for k, [v] in kinds.items()}
    kinds['wrapped'] = wrapped
    return kinds


class Node:
    """A fake-driver compute node whose reporter keeps a custom trait, its
    state (and status file) in tmp_path, and the page's lines run for
    it."""

    def __init__(self, placement, tmp_path, unique):
        self.client = placement.client()
        self.name = 'monitored-' + unique
        self.trait = 'CUSTOM_MONITORED_' + unique.upper()
        rp = writes.create_resource_provider(self.client, self.name)
        self.uuid = rp['uuid']
        self.conf = tmp_path / 'nova.conf'
        self.conf.write_text(
            '[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = %s\n'
            'state_path = %s\n[virt_capabilities]\ncustom_traits = %s\n%s'
            % (self.name, tmp_path, self.trait,
               placement.nova_conf_section()))
        self.status = tmp_path / 'virt_capabilities_status.json'
        self.textfile_dir = tmp_path / 'textfile'
        self.textfile_dir.mkdir()
        self.env = helpers.clean_env(PATH=os.pathsep.join([
            SCRIPTS, os.path.dirname(sys.executable), os.environ['PATH']]))

    def report(self):
        return subprocess.run(
            ['virt-capabilities', 'report', '--config-file', str(self.conf)],
            env=self.env, capture_output=True, text=True, timeout=120)

    def run(self, line):
        for documented, here in ((CONF, self.conf), (STATUS, self.status),
                                 (TEXTFILE_DIR, self.textfile_dir)):
            line = line.replace(documented, str(here))
        return subprocess.run(['sh', '-c', line], env=self.env,
                              capture_output=True, text=True, timeout=120)

    def metrics(self, line):
        proc = self.run(line)
        assert proc.returncode == 0 and proc.stdout == '', proc.stderr
        # Replaced whole: nothing else is left in the directory.
        assert os.listdir(self.textfile_dir) == ['virt_capabilities.prom']
        with open(self.textfile_dir / 'virt_capabilities.prom') as f:
            families = list(prometheus_parser.text_string_to_metric_families(
                f.read()))
        found = {}
        for family in families:
            assert family.type == 'gauge' and family.documentation
            [sample] = family.samples
            assert sample.labels == {'status_file': str(self.status)}
            found[sample.name] = sample.value
        return found

    def rewrite(self, **fields):
        """The reporter's own file with some fields changed: a state only
        time would bring (a reporter stopped an hour ago)."""
        document = json.loads(self.status.read_text())
        document.update(fields)
        self.status.write_text(json.dumps(document))


def ago(seconds):
    """A time as the reporter writes it, ``seconds`` ago."""
    return (datetime.datetime.now(datetime.timezone.utc)
            - datetime.timedelta(seconds=seconds)).isoformat(
                timespec='seconds')


def epoch(text):
    return datetime.datetime.fromisoformat(text).timestamp()


@pytest.mark.skipif(shutil.which('jq') is None,
                    reason='the recipes run jq (Debian: jq)')
def test_the_pages_lines_alert_as_it_says(placement, tmp_path, unique):
    lines = lines_by_kind()
    node = Node(placement, tmp_path, unique)

    # A sync that succeeded, and changed the node's provider.
    assert node.report().returncode == 0
    status = json.loads(node.status.read_text())
    nagios = node.run(lines[NAGIOS])
    assert (nagios.returncode, nagios.stdout) == (
        OK, 'OK - last sync %s, 1 provider(s) changed\n' % status['time'])
    metrics = node.metrics(lines[TEXTFILE])
    assert metrics == {
        'virt_capabilities_status_readable': 1,
        'virt_capabilities_last_sync_timestamp_seconds':
            epoch(status['time']),
        'virt_capabilities_last_success_timestamp_seconds':
            epoch(status['last_ok']),
        'virt_capabilities_last_sync_ok': 1,
        'virt_capabilities_last_sync_changed_providers': 1,
        'virt_capabilities_last_sync_failed_providers': 0}
    # Every metric the page's alerting rules name is one the script writes.
    rules = monitoring_page.alerting_rules()
    for rule in rules:
        promql_parser.parse(rule['expr'])  # ValueError if not PromQL
    named = {name for rule in rules
             for name in re.findall(r'virt_capabilities_\w+', rule['expr'])}
    assert len(rules) == 5 and named and named <= set(metrics)
    check = node.run(lines[CHECK])
    assert check.returncode == 0 and check.stdout.startswith('in sync: ')
    assert node.run(lines['wrapped']).returncode == OK

    # Somebody takes the reporter's trait off: drift, a WARNING in Nagios.
    traits, generation = node.client.get_provider_traits(node.uuid)
    node.client.put_provider_traits(node.uuid, traits - {node.trait},
                                    generation)
    check = node.run(lines[CHECK])
    assert check.returncode == DRIFT and check.stdout.startswith('drift: ')
    wrapped = node.run(lines['wrapped'])
    assert wrapped.returncode == WARNING and wrapped.stdout == check.stdout

    # A sync that fails (the provider is gone): WARNING, naming the error.
    node.client.request('DELETE', '/resource_providers/%s' % node.uuid,
                        ok=(204,))
    assert node.report().returncode == 1
    failed = json.loads(node.status.read_text())
    assert failed['result'] == 'failed' and node.name in failed['error']
    nagios = node.run(lines[NAGIOS])
    assert (nagios.returncode, nagios.stdout) == (
        WARNING, 'WARNING - last sync failed: %s\n' % failed['error'])
    metrics = node.metrics(lines[TEXTFILE])
    assert metrics['virt_capabilities_last_sync_ok'] == 0
    assert metrics['virt_capabilities_last_success_timestamp_seconds'] == \
        epoch(status['last_ok'])
    assert node.run(lines['wrapped']).returncode == WARNING  # not found: 1

    # Failing for longer than the page's critical threshold (1800 s).
    node.rewrite(last_ok=ago(3600))
    nagios = node.run(lines[NAGIOS])
    assert nagios.returncode == CRITICAL
    assert re.fullmatch(r'CRITICAL - last successful sync 36\d\d s ago: %s\n'
                        % re.escape(failed['error']), nagios.stdout)
    # A reporter that stopped: its last sync succeeded, long ago.
    node.rewrite(result='ok', error=None, time=ago(1000), last_ok=ago(1000))
    nagios = node.run(lines[NAGIOS])
    assert nagios.returncode == WARNING
    assert 'is the reporter running?' in nagios.stdout
    node.rewrite(time=ago(3600), last_ok=ago(3600))
    assert node.run(lines[NAGIOS]).returncode == CRITICAL
    # No sync has succeeded yet.
    node.rewrite(result='failed', error='the error', time=ago(0),
                 last_ok=None)
    nagios = node.run(lines[NAGIOS])
    assert (nagios.returncode, nagios.stdout) == (
        CRITICAL, 'CRITICAL - no sync has succeeded yet: the error\n')
    assert node.metrics(lines[TEXTFILE])[
        'virt_capabilities_last_success_timestamp_seconds'] == 0

    # Not a status file, or none: UNKNOWN, and only "not readable".
    node.status.write_text('{"format": "something else"}')
    assert node.run(lines[NAGIOS]).returncode == UNKNOWN
    node.status.unlink()
    nagios = node.run(lines[NAGIOS])
    assert nagios.returncode == UNKNOWN
    assert nagios.stdout.startswith('UNKNOWN - cannot read %s: '
                                    % node.status)
    assert nagios.stdout.count('\n') == 1
    assert node.metrics(lines[TEXTFILE]) == {
        'virt_capabilities_status_readable': 0}


# -- the lines a failing reporter writes are the page's ---------------------

def said(lines):
    """(level, line) of the WARNING and ERROR lines of a command's stderr
    (``LEVEL logger: message`` with no log destination in nova.conf)."""
    return [(line.split()[0], line) for line in lines
            if line.split()[:1] in (['WARNING'], ['ERROR'])]


def node_conf(tmp_path, placement_section, host='h', extra=''):
    tmp_path.mkdir()
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\nhost = %s\n'
                    'state_path = %s\n[virt_capabilities]\ncustom_traits = '
                    'CUSTOM_PAGED\n%s%s' % (host, tmp_path, extra,
                                            placement_section))
    return str(path)


def service_lines(conf, until):
    """The stderr of ``report --interval`` until it says ``until``, then
    stopped (SIGTERM, exit 0)."""
    with helpers.Child.module('virt_capabilities.cmd.main', 'report',
                              '--config-file', conf, '--interval',
                              '3600') as child:
        child.err.wait_for(until)
        child.send(signal.SIGTERM)
        assert child.finish() == 0
        return child.err.text().splitlines()


def oneshot_lines(*argv):
    proc = subprocess.run([sys.executable, '-m', *argv], capture_output=True,
                          text=True, timeout=120, env=helpers.clean_env())
    assert proc.returncode != 0
    return proc.stderr.splitlines()


@pytest.fixture
def failing():
    """A Placement that answers 503 to everything."""
    server = helpers.RecordingServer(status=503)
    yield server
    server.stop()


@pytest.fixture
def refusing():
    """One that answers 401 to everything."""
    server = helpers.RecordingServer(status=401)
    yield server
    server.stop()


def test_a_failing_reporter_says_only_lines_the_page_lists(
        placement, failing, refusing, tmp_path, unique):
    """Produced by running the code, not read from it: every WARNING and
    ERROR the reporter (service and one-shot) writes when Placement fails,
    refuses, or lacks the provider, or the state cannot be saved, is a line
    the page lists at that level."""
    runs = {
        'service, Placement failing': service_lines(
            node_conf(tmp_path / 'a', failing.nova_conf_section()),
            'sync failed'),
        'service, credentials refused': service_lines(
            node_conf(tmp_path / 'b', refusing.nova_conf_section()),
            'refused the credentials'),
        'one-shot, no provider': oneshot_lines(
            'virt_capabilities.cmd.main', 'report', '--config-file',
            node_conf(tmp_path / 'c', placement.nova_conf_section(),
                      host='never-' + unique)),
        'one-shot, state not saved': oneshot_lines(
            'virt_capabilities.cmd.main', 'report', '--config-file',
            node_conf(tmp_path / 'd', placement.nova_conf_section(),
                      host=writes.create_resource_provider(
                          placement.client(), 'unsaved-' + unique)['name'],
                      extra='state_file = /proc/nonexistent/state.json\n')),
    }
    for run, lines in runs.items():
        assert said(lines), '%s said nothing: %s' % (run, lines)
    matched, unlisted = monitoring_page.check_lines(
        [pair for lines in runs.values() for pair in said(lines)])
    assert not unlisted, 'lines not on the page: %s' % unlisted
    assert {'sync failed, next attempt at the next interval',
            'retrying with back-off', 'no resource provider found for',
            'sync stopped, since a trait set and not remembered'} <= matched
