# Sphinx configuration for the release notes (built by ``tox -e releasenotes``).
extensions = ['reno.sphinxext']
source_suffix = '.rst'
master_doc = 'index'
project = 'image-type-filter Release Notes'
copyright = 'The image-type-filter team'
version = ''
release = ''
exclude_patterns = []
pygments_style = 'sphinx'
html_theme = 'alabaster'
html_static_path = ['_static']
templates_path = ['_templates']
