'''The docs that describe the code's structure agree with the code (issue 46): the README's
layout row and docs/architecture.md's table and arrows name exactly the subpackages of
``mdxbench.post`` and the imports the layer test allows (test_layers.ALLOWED), and the
``mdxbench`` command's docstring lists exactly its commands. A subpackage, an allowed import
or a command added without its line in these docs fails here, naming what is missing.'''
import ast
import re

from test_layers import ALLOWED, POST

ROOT = POST.parent
README = ROOT / 'README.md'
ARCH = ROOT / 'docs' / 'architecture.md'
CLI = POST / 'cli.py'


def subpackages():
    return {p.parent.name for p in POST.glob('*/__init__.py')}


def ticked(text):
    return set(re.findall(r'`([\w.]+)`', text))


def readme_subpackages(text):
    '''The subpackages the README's layout row of `postprocess/` names.'''
    row = next(ln for ln in text.splitlines() if ln.startswith('| `postprocess/` |'))
    return ticked(row.split('per job:', 1)[1]) if 'per job:' in row else set()


def table_rows(text, header):
    '''{first cell: [the other cells]} of the Markdown table whose header row starts so.'''
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(header))
    rows = {}
    for ln in lines[start + 2:]:
        if not ln.startswith('|'):
            break
        cells = [c.strip() for c in ln.strip().strip('|').split('|')]
        rows[cells[0].strip('`')] = cells[1:]
    return rows


def arrows(text):
    '''{layer: what its arrow line names} from the ```text block of `a -> b, c` lines.'''
    block = re.search(r'```text\n(.*?)```', text, re.S).group(1)
    out = {}
    for ln in block.splitlines():
        m = re.match(r'\s*(\w+)\s*->\s*([\w, ]+)', ln)
        if m:
            out[m.group(1)] = {n.strip() for n in m.group(2).split(',') if n.strip()}
    return out


def cli_docstring():
    return ast.get_docstring(ast.parse(CLI.read_text()))


def cli_commands(doc):
    '''{command: the words it lists as ``a|b|c``, or None} from the ``    mdxbench NAME ...``
    lines of cli.py's docstring.'''
    return {m.group(1): set(m.group(2).split('|')) if m.group(2) else None
            for m in re.finditer(r'^\s+mdxbench ([a-z]+)(?: ([a-z]+(?:\|[a-z]+)+))?', doc,
                                 re.M)}


def first_choices(name):
    '''The choices of command ``name``'s first positional argument (its subcommands, or
    what ``bench`` measures), or None.'''
    from mdxbench.post.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == 'cmd').choices[name]
    for action in sub._actions:
        if not action.option_strings and action.choices:
            return set(action.choices)
    return None


def command_names():
    from mdxbench.post.commands import COMMANDS

    return {m.NAME for m in COMMANDS}


def test_the_readme_names_every_subpackage():
    assert readme_subpackages(README.read_text()) == subpackages()


def test_the_architecture_table_has_a_row_per_subpackage_with_its_allowed_imports():
    rows = table_rows(ARCH.read_text(), '| subpackage |')
    assert set(rows) == subpackages()
    for name, (_, imports) in rows.items():
        named = ticked(imports) if imports != 'the mdxbench library only' else set()
        assert named == ALLOWED[name], (name, imports)


def test_the_architecture_arrows_are_the_allowed_imports():
    drawn = arrows(ARCH.read_text())
    assert set(drawn) == set(ALLOWED)
    for name, targets in drawn.items():
        assert targets - {'mdxbench'} == ALLOWED[name], (name, targets)


def test_the_architecture_page_has_one_title():
    titles = [ln for ln in ARCH.read_text().splitlines() if re.match(r'#{1,2} ', ln)]
    assert len(set(titles)) == len(titles) and titles[0].startswith('# '), titles
    assert titles[1].lower() != '## ' + titles[0][2:].lower(), titles


def test_the_cli_docstring_lists_every_command_and_its_subcommands():
    listed = cli_commands(cli_docstring())
    assert set(listed) == command_names()
    for name, words in listed.items():
        if words is not None:
            assert words == first_choices(name), name


def test_these_checks_fail_on_a_missing_line():
    '''The readers above see a removed row, arrow or command (so the tests can fail).'''
    readme = README.read_text()
    row = next(ln for ln in readme.splitlines() if ln.startswith('| `postprocess/` |'))
    assert readme_subpackages(readme.replace(row, row.replace('`split`', ''))) \
        != subpackages()
    arch = ARCH.read_text()
    assert set(arrows(re.sub(r'\n\s*split\s*->[^\n]*', '', arch))) != set(ALLOWED)
    assert 'cycle' not in table_rows(re.sub(r'\n\| `cycle` \|[^\n]*', '', arch),
                                     '| subpackage |')
    doc = cli_docstring()
    session = next(ln for ln in doc.splitlines() if ln.strip().startswith('mdxbench session'))
    assert set(cli_commands(doc.replace(session, ''))) != command_names()
    assert cli_commands(doc.replace('|parsers', ''))['bench'] != first_choices('bench')
