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

"""Option registration: separate ConfigOpts never share state."""

from oslo_config import cfg

from image_type_filter import conf as itf_conf
from virt_capabilities import conf as vc_conf


def test_overrides_do_not_leak_between_config_objects():
    first, second = cfg.ConfigOpts(), cfg.ConfigOpts()
    for conf in (first, second):
        itf_conf.register_opts(conf)
        vc_conf.register_opts(conf)
        conf([])
    first.set_override('unknown_format', 'reject', 'image_type_filter')
    first.set_override('images_type', 'rbd', 'libvirt')
    first.set_override('connect_retries', 9, 'placement')
    assert second.image_type_filter.unknown_format == 'ignore'
    assert second.libvirt.images_type == 'default'
    assert second.placement.connect_retries == 3


def test_every_option_has_help():
    for list_opts in (vc_conf.list_opts, itf_conf.list_opts):
        for group, opts in list_opts():
            for opt in opts:
                assert opt.help, '%s.%s has no help' % (group, opt.dest)


def test_config_dir_skips_dot_files_as_nova_compute_does(tmp_path):
    """oslo.config reads a config dir's *.conf files by glob, which leaves
    dot-files out (an editor's swap file, a hidden backup): so do we."""
    from image_type_common.conf import loading
    directory = tmp_path / 'nova.conf.d'
    directory.mkdir()
    (directory / '10-driver.conf').write_text(
        '[DEFAULT]\ncompute_driver = fake.FakeDriver\n')
    (directory / '.20-backup.conf').write_bytes(b'\xff\xfe not UTF-8')
    conf = loading.load([], vc_conf.register_opts,
                        config_dirs=[str(directory)])
    assert conf.compute_driver == 'fake.FakeDriver'
