'''Sphinx configuration of mdxbench's reference documentation (built in CI with warnings
as errors: ``sphinx-build -W -b html docs <out>``, see ci/docs.sh).'''
project = 'mdxbench'
author = 'the mdxbench team'
copyright = '2026, the mdxbench team'
extensions = ['myst_parser', 'sphinxarg.ext']
source_suffix = {'.md': 'markdown', '.rst': 'restructuredtext'}
root_doc = 'index'
exclude_patterns = ['_build']
html_theme = 'alabaster'
html_static_path = ['_static']
html_title = 'mdxbench'
myst_heading_anchors = 3
