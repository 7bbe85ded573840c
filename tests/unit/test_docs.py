'''The reference documentation (docs/) builds with warnings as errors, and its command
reference is generated from the argument parser: every option of every command is in it,
and an option added to the parser appears without editing the docs.'''
import argparse
import os
import pathlib
import re
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


def test_the_readme_s_site_path_works_from_a_fresh_shell(tmp_path):
    '''The README's site path, as an operator types it in a new login shell (nothing of
    ours in the environment): `source ci/activate.sh`, then the listing of the daily use,
    and the `-C` form it gives instead. Both list mdx2's cases.'''
    readme = (ROOT / 'README.md').read_text()
    assert '    source ci/activate.sh ' in readme
    listing = 'reframe -c checks/ -l --system mdx2'
    assert f'    {listing}' in readme
    assert '`reframe -C site-configs/settings.py -c checks/ -r --system mdx2`' in readme
    env = {'HOME': str(tmp_path), 'PATH': '/usr/bin:/bin'}
    # where this checkout keeps its venv, if not the default (the operator's own setting)
    env.update({k: os.environ[k] for k in ('MDXBENCH_STATE_DIR', 'MDXBENCH_VENV')
                if k in os.environ})
    venv_reframe = pathlib.Path(sys.executable).parent / 'reframe'
    for line in (f'source ci/activate.sh >/dev/null && {listing}',
                 f'{venv_reframe} -C site-configs/settings.py -c checks/ -l --system mdx2'):
        res = subprocess.run(['bash', '-c', line], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, (line, res.stdout[-2000:], res.stderr[-2000:])
        found = re.search(r'Found (\d+) check\(s\)', res.stdout)
        assert found and int(found.group(1)) > 100, (line, res.stdout[-2000:])
    # and without either, ReFrame says what the README says it says
    res = subprocess.run([str(venv_reframe), '-c', 'checks/', '-l', '--system', 'mdx2'],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode != 0
    assert 'could not find a configuration entry for the requested system' in \
        res.stdout + res.stderr
