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

"""A service's log (nova.conf's log options, through oslo.log) gets our one
line for an outage, not keystoneauth1's warning per retry."""

import subprocess
import sys
import textwrap

from tests.helpers import clean_env

SCRIPT = textwrap.dedent('''
    import logging, sys
    from oslo_config import cfg
    from virt_capabilities import logs
    conf = cfg.ConfigOpts()
    logs.register_opts(conf)
    conf(sys.argv[1:])
    assert logs.setup(conf)
    logging.getLogger('keystoneauth.session').warning(
        'Failure: refused. Retrying in 0.5s. 3 retries left')
    logging.getLogger('urllib3.connectionpool').warning('Retrying (Retry)')
    logging.getLogger('virt_capabilities.service').warning(
        'sync failed, next attempt at the next interval')
''')


def service_log(tmp_path, *extra):
    conf = tmp_path / 'nova.conf'
    conf.write_text('[DEFAULT]\nlog_file = %s\n%s' % (
        tmp_path / 'compute.log', ''.join(line + '\n' for line in extra)))
    subprocess.run([sys.executable, '-c', SCRIPT, '--config-file',
                    str(conf)], check=True, env=clean_env(), timeout=60)
    return (tmp_path / 'compute.log').read_text()


def test_retry_chatter_stays_out_of_the_service_log(tmp_path):
    log = service_log(tmp_path)
    assert 'sync failed' in log
    assert 'Retrying' not in log


def test_the_operators_default_log_levels_still_win(tmp_path):
    log = service_log(tmp_path, 'default_log_levels = keystoneauth=WARN')
    assert 'Retrying in 0.5s' in log and 'sync failed' in log


SERVICE_SCRIPT = textwrap.dedent('''
    import sys, types
    from oslo_config import cfg
    from image_type_common import control as control_mod
    from image_type_common import exceptions
    from virt_capabilities import logs, service
    conf = cfg.ConfigOpts()
    logs.register_opts(conf)
    conf(sys.argv[1:])
    control = control_mod.Control()
    cycles = []

    class Job:
        conf = conf
        plan = types.SimpleNamespace(
            traits=frozenset(),
            settings=types.SimpleNamespace(status_file=None,
                                           reporter_name='test'))

        def sync(self, wait):
            cycles.append(wait)
            if len(cycles) == 1:
                return service.reporter_mod.SyncReport()
            if len(cycles) == 3:
                control.stop()
            raise exceptions.PlacementUnavailable(
                'cannot reach Placement at http://127.0.0.1:9: refused')

    sys.exit(service.run_service(lambda sleep: Job(), 0.01, 0, control))
''')


def test_a_services_outage_line_says_the_error_once(tmp_path):
    """Through oslo.log, as nova.conf's log options make it: one WARNING
    for two failed cycles, with the error's text once (oslo.log appends
    the exception being handled to a line logged inside ``except``)."""
    conf = tmp_path / 'nova.conf'
    conf.write_text('[DEFAULT]\nlog_file = %s\n' % (tmp_path / 'c.log'))
    subprocess.run([sys.executable, '-c', SERVICE_SCRIPT, '--config-file',
                    str(conf)], check=True, env=clean_env(), timeout=60)
    lines = [line for line in (tmp_path / 'c.log').read_text().splitlines()
             if ' WARNING ' in line]
    assert len(lines) == 1, lines
    assert lines[0].count('cannot reach Placement') == 1, lines[0]
