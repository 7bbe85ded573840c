'''Sphinx configuration of mdxbench's reference documentation (built in CI with warnings
as errors: ``sphinx-build -W -b html docs <out>``, see ci/docs.sh).'''
project = 'mdxbench'
author = 'the mdxbench team'
copyright = '2026, the mdxbench team'
extensions = ['myst_parser', 'sphinxarg.ext']
source_suffix = {'.md': 'markdown', '.rst': 'restructuredtext'}
root_doc = 'index'
exclude_patterns = ['_build', '_generated']
html_theme = 'alabaster'
html_static_path = ['_static']
html_title = 'mdxbench'
myst_heading_anchors = 3


def _generate():
    '''The tables the code owns, written where the pages include them: the settings
    (``mdxbench.settings``) and the exit codes (``mdxbench.post.exits``).'''
    import pathlib

    from mdxbench import settings
    from mdxbench.post import exits

    out = pathlib.Path(__file__).with_name('_generated')
    out.mkdir(exist_ok=True)
    for name, text in (('settings.md', settings.table()), ('exit-codes.md', exits.table())):
        f = out / name
        if not f.exists() or f.read_text() != text:
            f.write_text(text)


_generate()
