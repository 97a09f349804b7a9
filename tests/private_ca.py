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

"""A private certificate authority made at test time, as a cloud with its
own CA has: a CA certificate, a server certificate for 127.0.0.1 and a
client certificate it signed, each a PEM file in a directory of the
test's. Made with ``cryptography`` (openstacksdk's own dependency), so no
tool outside the virtualenv is needed. EC P-256 keys: made in
milliseconds.
"""

import dataclasses
import datetime
import ipaddress
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.oid import NameOID

VALIDITY = datetime.timedelta(days=2)
#: Clock skew allowance: a certificate valid from a little before now.
BACKDATE = datetime.timedelta(hours=1)


@dataclasses.dataclass(frozen=True)
class Authority:
    """The files of one private CA: ``cafile`` is what a client trusts."""

    cafile: str
    server_certfile: str
    server_keyfile: str
    client_certfile: str
    client_keyfile: str


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem_cert(cert):
    return cert.public_bytes(serialization.Encoding.PEM)


def _pem_key(key):
    return key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, 'wb') as f:
        f.write(data)
    return str(path)


def _builder(subject, issuer, public_key):
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(issuer)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - BACKDATE)
            .not_valid_after(now + VALIDITY))


def make(directory, name='ca'):
    """A CA named ``name`` and the certificates it signs, written into
    ``directory`` as ``NAME.pem``, ``NAME-server.{pem,key}`` (for
    127.0.0.1 and localhost) and ``NAME-client.{pem,key}``."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name('%s private CA' % name)
    ca = (_builder(ca_name, ca_name, ca_key.public_key())
          .add_extension(x509.BasicConstraints(ca=True, path_length=0),
                         critical=True)
          .add_extension(x509.KeyUsage(
              digital_signature=True, key_cert_sign=True, crl_sign=True,
              content_commitment=False, key_encipherment=False,
              data_encipherment=False, key_agreement=False,
              encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(
              ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))

    def leaf(common_name, usage, alt_names=None):
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (_builder(_name(common_name), ca_name, key.public_key())
                   .add_extension(x509.BasicConstraints(ca=False,
                                                        path_length=None),
                                  critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]),
                                  critical=False)
                   .add_extension(
                       x509.AuthorityKeyIdentifier.from_issuer_public_key(
                           ca_key.public_key()), critical=False))
        if alt_names:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(alt_names), critical=False)
        return key, builder.sign(ca_key, hashes.SHA256())

    path = lambda suffix: os.path.join(str(directory), name + suffix)  # noqa
    server_key, server = leaf('127.0.0.1', ExtendedKeyUsageOID.SERVER_AUTH, [
        x509.IPAddress(ipaddress.ip_address('127.0.0.1')),
        x509.DNSName('localhost')])
    client_key, client = leaf('%s client' % name,
                              ExtendedKeyUsageOID.CLIENT_AUTH)
    return Authority(
        cafile=_write(path('.pem'), _pem_cert(ca)),
        server_certfile=_write(path('-server.pem'), _pem_cert(server)),
        server_keyfile=_write(path('-server.key'), _pem_key(server_key)),
        client_certfile=_write(path('-client.pem'), _pem_cert(client)),
        client_keyfile=_write(path('-client.key'), _pem_key(client_key)))
