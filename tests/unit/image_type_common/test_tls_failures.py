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

"""How a TLS failure is told (no server: the chains keystoneauth1 raises
are built here from the exceptions urllib3 and ssl give, as seen on a
real gunicorn and a real Python TLS server)."""

import ssl

from keystoneauth1 import exceptions as ks_exc
import pytest
import urllib3

from image_type_common import exceptions
from image_type_common import tls


def chain(cause):
    """keystoneauth1's SSLError over urllib3's, as the session raises it."""
    try:
        try:
            raise urllib3.exceptions.SSLError(cause)
        except urllib3.exceptions.SSLError as low:
            raise ks_exc.SSLError('SSL exception connecting to x') from low
    except ks_exc.SSLError as exc:
        return exc


def test_an_eof_in_the_handshake_may_pass_and_hints_the_client_cert():
    failed = tls.failure(chain(ssl.SSLEOFError(
        8, 'EOF occurred in violation of protocol (_ssl.c:2427)')),
        tls.NOVA_CONF)
    assert failed.configuration is False
    assert failed.reason == (
        'TLS handshake failed (EOF occurred in violation of protocol): if '
        'it asks for a client certificate, set [placement] certfile and '
        'keyfile')


def test_a_refused_client_certificate_is_configuration():
    failed = tls.failure(chain(ssl.SSLError(
        1, '[SSL: TLSV1_ALERT_UNKNOWN_CA] tlsv1 alert unknown ca '
           '(_ssl.c:2580)')), tls.OPENSTACK_CLIENT,
        client_cert=('/etc/c.pem', '/etc/c.key'))
    assert failed.configuration is True
    assert '(tlsv1 alert unknown ca)' in failed.reason
    assert '/etc/c.pem (--os-cert (or OS_CERT))' in failed.reason


def test_a_connection_that_did_not_fail_at_tls_is_not_a_tls_failure():
    refused = ks_exc.ConnectFailure('Unable to establish connection: '
                                    '[Errno 111] Connection refused')
    assert tls.failure(refused, tls.NOVA_CONF) is None


def test_keyfile_without_certfile_is_refused():
    with pytest.raises(exceptions.ConfigError,
                       match=r'\[placement\] keyfile is set without '
                             r'\[placement\] certfile'):
        tls.check_files(tls.NOVA_CONF, keyfile='/etc/k.key')


def test_a_ca_directory_is_accepted(tmp_path):
    """requests takes a directory of hashed CA files (capath) too."""
    tls.check_files(tls.NOVA_CONF, cafile=str(tmp_path))
