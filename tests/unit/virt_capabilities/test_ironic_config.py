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

"""The compute guide's ironic block is what the reporter reads: an ironic
plan that writes node traits, and keystoneauth1's password plugin for
``[ironic]``, loaded without a request."""

import os

from keystoneauth1.identity import generic
import pytest

from image_type_common import exceptions
from image_type_common.conf import keystoneauth
from tests.repository import test_config_blocks as blocks
from virt_capabilities import ironic_node_traits
from virt_capabilities import plan as plan_mod


def ironic_block():
    found = [block for page, block in blocks.doc_blocks()
             if page == 'doc/source/install/compute.rst'
             and 'ironic.IronicDriver' in block]
    assert len(found) == 1
    return found[0]


def test_the_guides_block_reaches_ironic_as_nova_compute(tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text(ironic_block().replace('/var/lib/nova', str(tmp_path)))
    plan = plan_mod.NodePlan.from_files([str(path)], ['trove-node-1'])
    assert plan.on_ironic_node
    assert plan.traits == {'CUSTOM_TROVE'}
    adapter = ironic_node_traits.adapter_from_conf(plan.conf)
    assert isinstance(adapter.auth, generic.Password)
    assert adapter.auth._username == 'nova'
    assert adapter.service_type == 'baremetal'
    assert adapter.session.timeout == keystoneauth.DEFAULT_TIMEOUT


def test_show_says_the_custom_traits_go_to_the_ironic_node(tmp_path):
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = ironic.IronicDriver\n'
                    '[virt_capabilities]\ncustom_traits = CUSTOM_TROVE\n')
    why = plan_mod.NodePlan.from_files([str(path)], ['n1']).why()
    assert why['custom_traits'].endswith(
        '; on the Ironic node, which nova-compute copies to the provider '
        '(it removes any other trait there)')


@pytest.mark.parametrize('auth,option,value', [
    ('none', 'endpoint_override', '127.0.0.1:6385'),
    ('password', 'auth_url', 'keystone.example/v3'),
    ('none', 'endpoint_override', 'ftp://ironic.example/'),
])
def test_an_ironic_url_that_is_not_one_is_a_configuration_error(
        tmp_path, auth, option, value):
    """As ``[placement]``'s are (``connection.adapter_from_conf``): named
    before any request, exit 2."""
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = ironic.IronicDriver\n'
                    '[ironic]\nauth_type = %s\n%s = %s\n'
                    % (auth, option, value))
    plan = plan_mod.NodePlan.from_files([str(path)], ['n1'])
    with pytest.raises(exceptions.ConfigError) as caught:
        ironic_node_traits.adapter_from_conf(plan.conf)
    assert str(caught.value) == (
        "[ironic] %s: '%s' is not an http(s) URL" % (option, value))


def test_an_ironic_auth_url_that_is_not_keystone_is_named(
        tmp_path, requests_mock):
    """As ``[placement]``'s is: one unauthenticated GET of ``auth_url``
    before a token is asked for, and a 401 there is one line (exit 2)."""
    auth_url = 'http://keystone.example/v3'
    requests_mock.get(auth_url, status_code=401)
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = ironic.IronicDriver\n'
                    '[ironic]\nauth_type = password\nauth_url = %s\n'
                    'username = nova\npassword = p\n' % auth_url)
    plan = plan_mod.NodePlan.from_files([str(path)], ['n1'])
    with pytest.raises(exceptions.ConfigError) as caught:
        ironic_node_traits.adapter_from_conf(plan.conf)
    assert str(caught.value).startswith(
        "[ironic] auth_url '%s' answered 401 to version discovery" % auth_url)
    assert [r.method for r in requests_mock.request_history] == ['GET']


def test_openstacksdk_tls_files_are_checked_as_the_sections_are(
        tmp_path, monkeypatch):
    """``OS_*`` (or ``--os-cloud``) for Ironic goes through the same
    ``connection.connect`` as Placement's: a CA bundle that is not there
    is one line naming the setting, before anything is sent."""
    for name in [n for n in os.environ if n.startswith('OS_')]:
        monkeypatch.delenv(name)
    monkeypatch.setenv('OS_CLIENT_CONFIG_FILE', str(tmp_path / 'none.yaml'))
    monkeypatch.setenv('OS_AUTH_TYPE', 'none')
    monkeypatch.setenv('OS_BAREMETAL_ENDPOINT_OVERRIDE',
                       'http://127.0.0.1:9/')
    monkeypatch.setenv('OS_CACERT', str(tmp_path / 'no-such-ca.pem'))
    path = tmp_path / 'nova.conf'
    path.write_text('[DEFAULT]\ncompute_driver = ironic.IronicDriver\n')
    conf = plan_mod.NodePlan.from_files([str(path)], ['n1']).conf
    with pytest.raises(exceptions.ConfigError) as caught:
        ironic_node_traits.store_for(conf)
    assert str(caught.value).startswith(
        'cacert (clouds.yaml or OS_CACERT) %s: no such file'
        % (tmp_path / 'no-such-ca.pem'))
