'''The reference documentation (docs/) builds with warnings as errors, and its command
reference is generated from the argument parser: every option of every command is in it,
and an option added to the parser appears without editing the docs.'''
import argparse
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / 'docs'

pytest.importorskip('sphinxarg', reason='the docs extra is not installed (pip install .[docs])')


def options_of(parser, prefix='mdxbench'):
    '''{command path: option strings} of a parser and its sub-parsers.'''
    found = {prefix: {s for a in parser._actions for s in a.option_strings if s != '-h'
                      and s != '--help'}}
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                found.update(options_of(sub, f'{prefix} {name}'))
    return found


@pytest.fixture(scope='module')
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp('docs')
    res = subprocess.run([sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q', '-b',
                          'html', str(DOCS), str(out)], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return out


def test_docs_build_without_warnings_and_list_every_option(built):
    from mdxbench.post import cli

    html = (built / 'cli.html').read_text()
    expected = options_of(cli.build_parser())
    assert len(expected) >= 14 and sum(map(len, expected.values())) >= 80
    missing = [f'{cmd} {opt}' for cmd, opts in expected.items() for opt in sorted(opts)
               if opt not in html]
    assert missing == []


def test_readme_is_a_front_page():
    readme = (ROOT / 'README.md').read_text().splitlines()
    assert len(readme) <= 250
    assert readme[0].strip().startswith('bash ci/main.sh') and \
        readme[1].strip().startswith('bash ci/test.sh')


def test_an_option_added_to_the_parser_appears_in_the_docs(tmp_path, monkeypatch):
    '''The command reference is built from the live parser: add an option to a command in
    this process, build the command page, and it is there -- no doc was edited.'''
    from sphinx.application import Sphinx

    from mdxbench.post.commands import summary

    src = tmp_path / 'src'
    src.mkdir()
    shutil.copy(DOCS / 'conf.py', src)
    shutil.copy(DOCS / 'cli.md', src / 'index.md')
    (src / '_static').mkdir()
    original = summary.add_arguments

    def with_new_option(p):
        original(p)
        p.add_argument('--brand-new-option', help='added by the test, in no doc')

    monkeypatch.setattr(summary, 'add_arguments', with_new_option)
    app = Sphinx(str(src), str(src), str(tmp_path / 'out'), str(tmp_path / 'doctrees'), 'html',
                 status=None, warning=None, freshenv=True, warningiserror=True)
    app.build()
    html = (tmp_path / 'out' / 'index.html').read_text()
    assert '--brand-new-option' in html and 'added by the test, in no doc' in html
