'''The structure of mdxbench.post, read from its imports (the rule of its __init__):
each subpackage imports only those below it, and the command layer holds no loops.'''
import ast
import pathlib

import pytest

POST = pathlib.Path(__file__).resolve().parents[2] / 'postprocess'

#: subpackage -> the subpackages it may import (besides itself and the mdxbench library)
ALLOWED = {
    'store': set(),
    'analysis': {'store'},
    'fleet': {'store', 'analysis'},
    'site': {'store', 'analysis'},
    'split': {'store', 'analysis', 'fleet'},
    'cycle': {'store', 'analysis', 'site', 'fleet', 'split'},
    'bench': {'store', 'analysis', 'fleet', 'site', 'split'},
    'commands': {'store', 'analysis', 'fleet', 'site', 'bench', 'cycle', 'split'},
    'cli': {'commands', 'store'},
}


def layer(path, root=POST):
    rel = path.relative_to(root)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imported(tree):
    '''The mdxbench.post subpackages a module imports (anywhere in it, lazily or not).'''
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + ([f'{node.module}.{a.name}' for a in node.names]
                                     if node.module == 'mdxbench.post' else [])
        for n in names:
            parts = n.split('.')
            if parts[:2] == ['mdxbench', 'post'] and len(parts) > 2:
                found.add(parts[2])
    return found


def graph(root=POST):
    '''{subpackage: subpackages it imports}, over every module of the package.'''
    edges = {}
    for f in sorted(root.rglob('*.py')):
        if f.name == '__init__.py' and f.parent == root:
            continue
        name = layer(f, root)
        edges.setdefault(name, set()).update(imported(ast.parse(f.read_text())) - {name})
    return edges


def violations(edges):
    return [f'{a} imports {b}' for a, bs in sorted(edges.items()) for b in sorted(bs)
            if b not in ALLOWED.get(a, set())]


def test_every_subpackage_imports_only_those_below_it():
    edges = graph()
    assert set(edges) == set(ALLOWED), edges
    assert violations(edges) == []
    # presentation is on top of analysis, never under it
    assert 'site' not in edges['analysis'] and 'analysis' in edges['site']


def test_a_presentation_import_in_analysis_is_caught(tmp_path):
    '''The rule can fail: analysis importing site's text tables is reported.'''
    (tmp_path / 'analysis').mkdir()
    (tmp_path / 'analysis' / 'regress.py').write_text(
        'def render(t):\n    from mdxbench.post.site import text\n    return text.render((), [])\n')
    assert violations(graph(tmp_path)) == ['analysis imports site']


LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp,
         ast.GeneratorExp)


def loops(path, allowed=()):
    '''Loops of a module, but those over a name in ``allowed`` (``for mod in COMMANDS``).'''
    return [f'{path.name}:{n.lineno}' for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, LOOPS)
            and not (isinstance(n, ast.For) and isinstance(n.iter, ast.Name)
                     and n.iter.id in allowed)]


@pytest.mark.parametrize('module', sorted((POST / 'commands').glob('*.py')), ids=lambda p: p.stem)
def test_the_command_layer_parses_and_calls_without_loops(module):
    '''A command's module defines its arguments and calls its job: any loop over records or
    nodes (or anything else) belongs in store, analysis, fleet or site.'''
    assert loops(module) == []


def test_the_cli_loops_only_over_the_commands():
    '''cli.py builds one sub-parser per command module and calls the chosen one.'''
    assert loops(POST / 'cli.py', allowed={'COMMANDS'}) == []
    assert loops(POST / 'cli.py') != []


def test_a_loop_in_a_command_is_caught(tmp_path):
    f = tmp_path / 'cmd.py'
    f.write_text('def run(args):\n    for v in args.verdicts:\n        print(v)\n')
    assert loops(f) == ['cmd.py:2']
