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

"""TLS: the files checked before anything is sent, and a failed handshake
in one line naming the setting to fix, in the words of the credentials'
source (``Settings``; doc/source/install/credentials.rst, "TLS").
"""

import dataclasses
import logging
import os
import re
import ssl
import warnings

from keystoneauth1 import exceptions as ks_exc
import requests
import urllib3

from image_type_common import exceptions

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Settings:
    """The TLS settings of one source of credentials, as an operator
    sets them there."""

    cafile: str
    certfile: str
    keyfile: str
    #: Both halves of the client certificate, in one phrase.
    client_cert: str
    insecure: str


def section(group):
    """The TLS settings of nova.conf's ``[group]``: keystoneauth1's
    session options, as any section has them."""
    return Settings(cafile='[%s] cafile' % group,
                    certfile='[%s] certfile' % group,
                    keyfile='[%s] keyfile' % group,
                    client_cert='[%s] certfile and keyfile' % group,
                    insecure='[%s] insecure' % group)


NOVA_CONF = section('placement')
CLOUDS_YAML = Settings(cafile='cacert (clouds.yaml or OS_CACERT)',
                       certfile='cert (clouds.yaml or OS_CERT)',
                       keyfile='key (clouds.yaml or OS_KEY)',
                       client_cert='cert and key (clouds.yaml or OS_CERT '
                                   'and OS_KEY)',
                       insecure='verify: false (clouds.yaml or OS_INSECURE)')
OPENSTACK_CLIENT = Settings(cafile='--os-cacert (or OS_CACERT)',
                            certfile='--os-cert (or OS_CERT)',
                            keyfile='--os-key (or OS_KEY)',
                            client_cert='--os-cert and --os-key (or OS_CERT '
                                        'and OS_KEY)',
                            insecure='--insecure')

#: OpenSSL's verify results (X509_V_ERR_*) that mean "signed by a CA you
#: do not trust": the CA bundle is what to set. Any other (a host name the
#: certificate does not name, an expired certificate) is the server's to
#: fix. keystoneauth1 and requests raise one SSLError for every refused
#: certificate; only the ssl.SSLCertVerificationError in its chain tells
#: them apart, by this number (``verify_code``).
UNTRUSTED = frozenset((2, 18, 19, 20, 21, 27))
_SSL_NOISE = re.compile(r'^\s*(?:\[[^\]]*\]\s*)?(.*?)(?:\s*\(_ssl\.c:\d+\))?'
                        r'\s*$', re.S)


def check_files(settings, cafile=None, certfile=None, keyfile=None):
    """Refuse a CA bundle or client certificate that cannot work, in one
    line naming the setting and the file, before anything is sent
    (requests would raise a bare OSError on the first request)."""
    if keyfile and not certfile:
        raise exceptions.ConfigError(
            '%s is set without %s: a client certificate needs both'
            % (settings.keyfile, settings.certfile))
    for name, path in ((settings.cafile, cafile),
                       (settings.certfile, certfile),
                       (settings.keyfile, keyfile)):
        if path and not os.path.isdir(path):
            try:
                open(path, 'rb').close()
            except OSError as exc:
                raise exceptions.ConfigError('%s %s: %s' % (
                    name, path, (exc.strerror or str(exc)).lower())) from exc
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if cafile:
        try:
            if os.path.isdir(cafile):
                context.load_verify_locations(capath=cafile)
            else:
                context.load_verify_locations(cafile=cafile)
        except ssl.SSLError as exc:
            raise exceptions.ConfigError(
                '%s %s holds no PEM certificate (%s)'
                % (settings.cafile, cafile, ssl_words(exc))) from exc
    if certfile:
        try:
            context.load_cert_chain(certfile, keyfile)
        except ssl.SSLError as exc:
            if exc.reason == 'KEY_VALUES_MISMATCH':
                problem = 'its key is not the one in %s %s' % (
                    settings.keyfile, keyfile) if keyfile else \
                    'its key does not match the certificate'
            elif keyfile:
                problem = ('is not a PEM certificate, or %s %s is not its '
                           'PEM private key' % (settings.keyfile, keyfile))
            else:
                problem = ('holds no PEM certificate and private key: set '
                           '%s too' % settings.keyfile)
            raise exceptions.ConfigError(
                '%s %s: %s' % (settings.certfile, certfile, problem)
            ) from exc


def warn_if_insecure(verify, settings, service='Placement'):
    """One WARNING for the whole process instead of urllib3's warning on
    each connection: the certificates of Keystone and ``service`` are not
    checked."""
    if verify is not False:
        return
    LOG.warning('%s is set: the certificates of Keystone and %s are not '
                'verified, so anyone on the path can read the credentials; '
                'set %s instead', settings.insecure, service,
                settings.cafile)
    warnings.filterwarnings('ignore',
                            category=urllib3.exceptions.InsecureRequestWarning)


def ssl_words(error):
    """An OpenSSL message without its library tag and source line."""
    return ' '.join(_SSL_NOISE.match(str(error)).group(1).split())


def chain(exc):
    """``exc`` and the exceptions it was raised from, outermost first."""
    while exc is not None:
        yield exc
        exc = exc.__cause__ or exc.__context__


def in_chain(exc, kinds):
    """The first exception of ``kinds`` in ``chain(exc)``, or None."""
    return next((seen for seen in chain(exc) if isinstance(seen, kinds)),
                None)


@dataclasses.dataclass(frozen=True)
class Failure:
    """Why a connection failed at TLS: ``reason`` for the one line, and
    whether it is the configuration's to fix (exit 2) or may pass."""

    reason: str
    configuration: bool


def failure(exc, settings, client_cert=None):
    """The TLS failure inside a keystoneauth1 connection failure, or None
    (``client_cert``: the one the session sends, if any)."""
    verify = in_chain(exc, ssl.SSLCertVerificationError)
    if verify is not None:
        words = ssl_words(verify)
        if verify.verify_code in UNTRUSTED:
            return Failure('TLS: its certificate is not trusted (%s): set '
                           '%s to the CA bundle that signed it'
                           % (words, settings.cafile), True)
        return Failure('TLS: its certificate was refused (%s)' % words, True)
    if in_chain(exc, (ks_exc.SSLError, requests.exceptions.SSLError,
                       ssl.SSLError)) is None:
        return None
    cause = in_chain(exc, (ssl.SSLError, urllib3.exceptions.SSLError))
    words = ssl_words(cause) if cause is not None else 'no detail'
    if client_cert:
        sent = client_cert[0] if isinstance(client_cert, tuple) \
            else client_cert
        hint = ('does it accept the client certificate %s (%s)?'
                % (sent, settings.certfile))
        # The server's alert (unknown CA, bad certificate) is its answer.
        refused = 'alert' in words
    else:
        refused = 'certificate required' in words
        hint = ('it asks for a client certificate: set %s' if refused else
                'if it asks for a client certificate, set %s'
                ) % settings.client_cert
    if refused:
        return Failure('TLS handshake refused (%s): %s' % (words, hint), True)
    return Failure('TLS handshake failed (%s): %s' % (words, hint), False)
