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

"""``image_type_filter.settings`` is where the scheduler side's options
are read: the request filters read none by name."""

import os

from tests import helpers


def test_the_filters_read_no_option_by_name():
    modules = helpers.package_modules(
        os.path.join('image_type_filter', 'scheduler'))
    # The scan sees every filter module (not a path that matches nothing).
    assert {os.path.basename(path) for path in modules} >= {
        'pipeline.py', 'image_type_support.py', 'isolation.py',
        'image_metadata_prefilter.py'}
    assert [read for path in modules
            for read in helpers.option_reads_by_name(path)] == []


def test_the_rule_finds_the_reads_its_docstring_names():
    """What settings' docstring says is read elsewhere is found there:
    the check above would see a read of either kind."""
    def reads(*parts):
        return helpers.option_reads_by_name(
            os.path.join(helpers.REPO, 'image_type_filter', *parts))
    assert any(r.endswith(': conf.filter_scheduler')
               for r in reads('nova', 'integration.py'))
    assert any(r.endswith(': conf.CONF.workarounds')
               for r in reads('diagnostics', 'nova_side', 'as_scheduler.py'))
    assert any(r.endswith(': conf.placement')
               for r in reads('cmd', 'osc_plugin.py'))
    assert any('loading.read(' in r for r in reads('settings.py'))


def test_only_the_modules_its_docstring_names_read_an_option_by_name():
    """settings' docstring names every other module that reads an option
    by name: a new one is named there, or reads through settings."""
    readers = {os.path.relpath(path, helpers.REPO)
               for path in helpers.package_modules('image_type_filter',
                                                   'image_type_common')
               if helpers.option_reads_by_name(path)}
    assert readers == {
        os.path.join('image_type_filter', 'settings.py'),
        os.path.join('image_type_filter', 'nova', 'integration.py'),
        os.path.join('image_type_filter', 'diagnostics', 'nova_side',
                     'as_scheduler.py'),
        os.path.join('image_type_common', 'connection.py'),
        os.path.join('image_type_filter', 'cmd', 'osc_plugin.py'),
        # loading.read itself, which settings reads through.
        os.path.join('image_type_common', 'conf', 'loading.py'),
    }
