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
    '''The tables the code and data own, written where the pages include them: the settings
    (``mdxbench.settings``), the exit codes (``mdxbench.post.exits``) and the mutation
    run's survivors argued equivalent (``tests/mutation/equivalent.yaml``).'''
    import pathlib
    import sys

    from mdxbench import REPO_ROOT, settings
    from mdxbench.post import exits

    sys.path.insert(0, str(REPO_ROOT / 'tests' / 'mutation'))
    import equivalent

    out = pathlib.Path(__file__).with_name('_generated')
    out.mkdir(exist_ok=True)
    for name, text in (('settings.md', settings.table()), ('exit-codes.md', exits.table()),
                       ('mutation-equivalent.md', equivalent.markdown(equivalent.load()))):
        f = out / name
        if not f.exists() or f.read_text() != text:
            f.write_text(text)


_generate()
