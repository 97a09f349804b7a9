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

"""``virt_capabilities.settings`` is where the reporter's options are
read: besides it, only the two modules its docstring names read one by
name."""

import os

from tests import helpers

#: What settings' docstring names, and why: the [ironic] section and the
#: logging options.
READ_WHERE_USED = ('ironic_node_traits.py', 'logs.py')


def test_only_settings_and_the_named_modules_read_an_option_by_name():
    reads = {}
    for path in helpers.package_modules('virt_capabilities'):
        found = helpers.option_reads_by_name(path)
        if found:
            reads[os.path.relpath(path, os.path.join(helpers.REPO,
                                                     'virt_capabilities'))] \
                = found
    assert sorted(reads) == sorted(READ_WHERE_USED + ('settings.py',)), reads
    assert all(': conf.ironic' in r or ': conf[group]' in r
               for r in reads['ironic_node_traits.py'])


def test_every_option_of_the_reporter_and_the_driver_is_read_here(
        tmp_path, monkeypatch):
    from image_type_common.conf import loading
    from virt_capabilities import conf as vc_conf
    from virt_capabilities import settings
    from virt_capabilities.conf import nova
    from virt_capabilities.conf import reporter
    declared = {(group or 'DEFAULT', opt.dest)
                for module in (nova, reporter)
                for group, opts in module.list_opts().items()
                for opt in opts
                for group in [getattr(group, 'name', group)]}
    node = tmp_path / 'nova.conf'
    node.write_text('[DEFAULT]\ncompute_driver = fake.FakeDriver\n')
    conf = vc_conf.load([str(node)])  # which checks every option's value
    read = set()
    real = loading.read

    def reading(conf, name, group=None):
        read.add((group or 'DEFAULT', name))
        return real(conf, name, group)
    monkeypatch.setattr(settings.loading, 'read', reading)
    settings.NodeSettings.from_conf(conf)
    assert read == declared
