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
#: modules every layer may import, as the mdxbench library: they import nothing of ours
#: (the exit codes; the argument types that refuse a bad value)
ANYONE = {'exits', 'arguments'}


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
            if b not in ALLOWED.get(a, set()) | ANYONE or a in ANYONE]


def test_every_subpackage_imports_only_those_below_it():
    edges = graph()
    assert set(edges) == set(ALLOWED) | ANYONE, edges
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


def module_imports(root=POST):
    '''{module: the mdxbench.post modules it imports anywhere in it -- at the top or inside
    a function, where an import would hide a loop from the reader}; modules as
    ``<subpackage>.<module>`` (``cli`` for the top-level one).'''
    mods = {}
    for f in sorted(root.rglob('*.py')):
        if f.name == '__init__.py':
            continue
        mods['.'.join(f.relative_to(root).with_suffix('').parts)] = f
    edges = {}
    for name, f in mods.items():
        found = set()
        for node in ast.walk(ast.parse(f.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets = [f'{node.module}.{a.name}' for a in node.names] + [node.module]
            for t in targets:
                if t.startswith('mdxbench.post.') and t[len('mdxbench.post.'):] in mods:
                    found.add(t[len('mdxbench.post.'):])
        edges[name] = found - {name}
    return edges


def cycles(edges):
    '''The import loops of ``edges``: each strongly connected set of two or more modules,
    sorted (Tarjan's algorithm).'''
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def test_no_module_imports_itself_round_a_loop():
    '''Issue 46: an import inside a function body hid two loops (analysis: changes ->
    chunked -> scancopy -> incremental -> changes; store: records -> history -> records).
    Every import counts, wherever it is written.'''
    assert cycles(module_imports()) == []


def test_a_loop_hidden_in_a_function_body_is_caught(tmp_path):
    (tmp_path / 'store').mkdir()
    (tmp_path / 'store' / 'records.py').write_text(
        'def read():\n    from mdxbench.post.store import history\n')
    (tmp_path / 'store' / 'history.py').write_text('from mdxbench.post.store import records\n')
    (tmp_path / 'store' / 'events.py').write_text('from mdxbench.post.store import records\n')
    assert cycles(module_imports(tmp_path)) == [['store.history', 'store.records']]


# --- private names stay in their module ---------------------------------------------------
PACKAGES = {'mdxbench': POST.parent / 'reframe' / 'mdxbench', 'mdxbench.post': POST}


def module_name(path, packages=PACKAGES):
    '''The dotted name of a module file of the packages.'''
    for name, base in sorted(packages.items(), key=lambda kv: -len(str(kv[1]))):
        try:
            rel = path.relative_to(base)
        except ValueError:
            continue
        parts = list(rel.with_suffix('').parts)
        return '.'.join([name] + (parts[:-1] if parts[-1] == '__init__' else parts))
    raise ValueError(path)


def private_crossings(packages=PACKAGES):
    '''"FILE:LINE: NAME" for each name with one leading underscore that a module takes from
    another of ours: ``from m import _x`` or ``m._x`` with ``m`` an imported module of ours.'''
    out = []
    for base in packages.values():
        for f in sorted(base.rglob('*.py')):
            me = module_name(f, packages)
            tree = ast.parse(f.read_text())
            modules = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    mod = node.module or ''
                    if node.level:
                        up = me.split('.')[:-node.level] if not f.name == '__init__.py' \
                            else me.split('.')[:len(me.split('.')) - node.level + 1]
                        mod = '.'.join(up + ([node.module] if node.module else []))
                    for a in node.names:
                        if mod.startswith('mdxbench') and mod != me and \
                                a.name.startswith('_') and not a.name.startswith('__'):
                            out.append(f'{f}:{node.lineno}: {mod}.{a.name}')
                        modules[a.asname or a.name] = f'{mod}.{a.name}'
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        modules[a.asname or a.name.split('.')[0]] = a.name
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                        node.attr.startswith('_') and not node.attr.startswith('__'):
                    target = modules.get(node.value.id, '')
                    if target.startswith('mdxbench') and target != me:
                        out.append(f'{f}:{node.lineno}: {target}.{node.attr}')
    return out


def test_no_private_name_is_used_outside_its_module():
    assert private_crossings() == []


def test_a_private_name_taken_from_another_module_is_caught(tmp_path):
    '''A copy of store/ in which esread takes records' canonical_params by a private name,
    both ways (an attribute of the module and an import of the name).'''
    import shutil
    post = tmp_path / 'postprocess'
    shutil.copytree(POST / 'store', post / 'store',
                    ignore=shutil.ignore_patterns('__pycache__'))
    (post / '__init__.py').write_text('')
    f = post / 'store' / 'esread.py'
    f.write_text(f.read_text().replace('records.canonical_params', 'records._params')
                 + '\nfrom mdxbench.post.store.records import _params  # noqa\n')
    found = private_crossings({'mdxbench.post': post})
    assert [x.split(': ', 1)[1] for x in found] == ['mdxbench.post.store.records._params'] * 2


#: the kept history's own modules (issue 62): the scan that keeps it, its file formats,
#: and its front door, :mod:`mdxbench.post.analysis.kept`
KEPT_HISTORY = {'analysis.kept', 'analysis.scan', 'analysis.scancopy', 'analysis.chunked',
                'analysis.chunkfiles', 'analysis.locators', 'analysis.processes',
                'analysis.incremental', 'analysis.past'}


def kept_formats_opened_outside(edges):
    '''The modules outside :data:`KEPT_HISTORY` that import its scan or file formats
    (``chunked``, ``chunkfiles``, ``scancopy``) instead of reading through ``analysis.kept``.'''
    return sorted(m for m, imported in edges.items() if m not in KEPT_HISTORY and imported
                  & {'analysis.chunked', 'analysis.chunkfiles', 'analysis.scancopy'})


def test_the_kept_history_is_read_through_its_front_door_alone():
    '''The site, the sensitivity, the commands and the bench read the kept history through
    ``analysis.kept`` (Kept, Chunk, Table), never its chunk files or manifest.'''
    assert kept_formats_opened_outside(module_imports()) == []


def test_a_reader_that_opens_the_kept_chunks_is_caught():
    edges = module_imports()
    edges['site.kept'] = edges['site.kept'] | {'analysis.chunked'}
    assert kept_formats_opened_outside(edges) == ['site.kept']
