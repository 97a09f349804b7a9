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

"""The embedded server's arguments and generated placement.conf (no server)."""

import configparser
import ssl

import pytest

from placement_runner import server as es


def test_generated_conf_carries_the_options_on_top():
    text = es.placement_conf(
        'postgresql+psycopg2://postgres@/placement?host=/tmp/x', False,
        [('placement', 'randomize_allocation_candidates', 'True'),
         ('DEFAULT', 'debug', 'True')])
    conf = configparser.ConfigParser(interpolation=None)
    conf.read_string(text)
    assert conf.get('placement_database', 'connection').endswith('host=/tmp/x')
    assert conf.get('placement_database', 'sync_on_startup') == 'False'
    assert conf.get('placement', 'randomize_allocation_candidates') == 'True'
    assert conf.get('api', 'auth_strategy') == 'noauth2'
    assert conf.get('DEFAULT', 'debug') == 'True'
    # Keys of [DEFAULT] are not repeated in every section.
    assert text.count('debug =') == 1


@pytest.mark.parametrize('url', [
    'postgresql+psycopg2://placement:pa$word@/placement?host=/tmp/s',
    'mysql+pymysql://placement:x$$y${z}@127.0.0.1/placement',
])
def test_generated_conf_takes_the_database_url_literally(tmp_path, url):
    """oslo.config reads "$name" as a substitution: a password's "$"
    must reach Placement as it is."""
    from oslo_config import cfg

    path = tmp_path / 'placement.conf'
    path.write_text(es.placement_conf(url, False))
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.StrOpt('connection'), group='placement_database')
    conf(args=[], default_config_files=[str(path)])
    assert conf.placement_database.connection == url


@pytest.mark.parametrize('url,sqlite', [
    ('sqlite:////tmp/p.db', True), ('sqlite://', True),
    ('postgresql+psycopg2://u@/db?host=/s', False),
    ('mysql+pymysql://u:p@127.0.0.1/placement', False)])
def test_is_sqlite(url, sqlite):
    assert es.is_sqlite(url) is sqlite


@pytest.mark.parametrize('argv,message', [
    (['--workers', '2'], 'SQLite is served by one thread'),
    (['--postgresql', '--workers', '0'], 'from 1 to 64, not 0'),
    (['--postgresql', '--workers', '99999'], 'from 1 to 64, not 99999'),
    (['--port', '70000'], 'between 0 and 65535'),
    (['--tls-certfile', 'c.pem'], 'go together'),
    (['--tls-keyfile', 'c.key'], 'go together'),
    (['--tls-client-ca', 'ca.pem'], 'needs --tls-certfile'),
])
def test_arguments_that_cannot_work(argv, message):
    with pytest.raises(es.UsageError, match=message):
        es.parse_args(argv)


def test_option_must_be_section_key_value(capsys):
    with pytest.raises(SystemExit):
        es.parse_args(['--option', 'randomize=True'])
    assert 'SECTION.KEY=VALUE' in capsys.readouterr().err


def test_option_cannot_edit_a_users_conf(tmp_path):
    (tmp_path / 'placement.conf').write_text('[DEFAULT]\n')
    with pytest.raises(es.UsageError, match='edit yours'):
        es.parse_args(['--config-dir', str(tmp_path), '--option',
                       'placement.x=1'])


def test_postgresql_and_several_workers_is_accepted():
    args = es.parse_args(['--postgresql', '--workers', '8'])
    assert args.postgresql and args.workers == 8
    assert not es._sqlite_source(args)


def test_tls_is_gunicorns_https_with_the_client_ca_required():
    args = es.parse_args(['--tls-certfile', 'c.pem', '--tls-keyfile',
                          'c.key', '--tls-client-ca', 'ca.pem'])
    found = es.tls_arguments(args)
    assert found[:4] == ['--certfile', 'c.pem', '--keyfile', 'c.key']
    assert found[found.index('--ca-certs') + 1] == 'ca.pem'
    assert found[found.index('--cert-reqs') + 1] == str(
        int(ssl.CERT_REQUIRED))
    assert es.tls_arguments(es.parse_args([])) == []
