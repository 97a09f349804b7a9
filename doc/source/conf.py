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

"""Sphinx configuration for image-type-filter's documentation.

Built by ``tox -e docs`` with warnings as errors. The option reference and
sample files come from the code's own ``list_opts`` (oslo.config's Sphinx
extensions), the command reference from the commands themselves (cliff's),
the release notes from ``releasenotes/notes`` (reno's), the benchmark
tables from the JSON under ``benchmarks/figures`` (``_ext/benchmark_tables``),
the supported Nova releases from ``image_type_common.nova_releases``.
"""

from importlib import metadata
import os
import sys

from image_type_common import nova_releases

# benchmark_tables: the benchmark figures, rendered from their JSON.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '_ext'))

extensions = [
    'openstackdocstheme',
    'oslo_config.sphinxext',
    'oslo_config.sphinxconfiggen',
    'cliff.sphinxext',
    'reno.sphinxext',
    # benchmarks/README.md and contrib/placement/README.md, rendered as
    # they are.
    'myst_parser',
    'benchmark_tables',
]

# oslo_config.sphinxconfiggen: one sample file per generator configuration,
# written to _static/ and linked from configuration/samples/.
config_generator_config_file = [
    ('../../etc/oslo-config-generator/virt-capabilities.conf',
     '_static/virt-capabilities'),
    ('../../etc/oslo-config-generator/image-type-filter.conf',
     '_static/image-type-filter'),
]

# openstackdocstheme
openstackdocs_repo_name = 'x/image-type-filter'
openstackdocs_bug_project = 'image-type-filter'
openstackdocs_bug_tag = 'doc'
openstackdocs_auto_name = False
# The version setup.cfg declares, not one guessed from git (no tag yet).
openstackdocs_auto_version = False
version = release = metadata.version('image-type-filter')

# The supported Nova releases, as every page writes them: |nova-supported|
# (versions and series), |nova-range| (major versions), |nova-tested| (the
# two releases CI boots through).
rst_epilog = """
.. |nova-supported| replace:: %s
.. |nova-range| replace:: %s
.. |nova-tested| replace:: %s
""" % (nova_releases.SUPPORTED, nova_releases.RANGE, nova_releases.TESTED)

project = 'image-type-filter'
copyright = 'The image-type-filter team'
master_doc = 'index'
source_suffix = '.rst'
exclude_patterns = []
pygments_style = 'native'
html_theme = 'openstackdocs'
html_static_path = ['_static']
html_css_files = ['wide-tables.css']
