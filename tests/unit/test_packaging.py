'''What the installed package holds, against the tree (issue 62, item 3): pyproject.toml's
package list is every package directory under reframe/mdxbench and postprocess (a new
subpackage left out would pass the unit tests, which import from the tree, and be missing
from the install), and postprocess/__init__.py's table of subpackages names each of them
once.'''
import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def tree_packages(root=ROOT):
    '''The dotted names of the package directories of the tree, as pyproject's package-dir
    maps them.'''
    conf = tomllib.loads((root / 'pyproject.toml').read_text())['tool']['setuptools']
    out = set()
    for name, path in conf['package-dir'].items():
        base = root / path
        for init in base.rglob('__init__.py'):
            rel = init.parent.relative_to(base)
            out.add('.'.join((name, *rel.parts)) if rel.parts else name)
    return out


def listed_packages(root=ROOT):
    conf = tomllib.loads((root / 'pyproject.toml').read_text())['tool']['setuptools']
    return set(conf['packages'])


def table_subpackages(root=ROOT):
    '''The subpackages postprocess/__init__.py's table names (its first column).'''
    doc = (root / 'postprocess' / '__init__.py').read_text()
    return set(re.findall(r'^``(\w+)``\s{2,}', doc, re.M))


def test_every_package_of_the_tree_is_installed_and_nothing_else():
    assert listed_packages() == tree_packages()


def test_the_table_of_subpackages_is_the_tree():
    subs = {p.split('.')[2] for p in tree_packages() if p.startswith('mdxbench.post.')}
    assert table_subpackages() == subs


def test_a_new_subpackage_is_caught_by_both(tmp_path):
    '''A copy of the tree with one more subpackage (postprocess/extra/__init__.py): the
    package list and the table both lack it, and the tests above say so.'''
    import shutil
    shutil.copy(ROOT / 'pyproject.toml', tmp_path / 'pyproject.toml')
    shutil.copytree(ROOT / 'postprocess', tmp_path / 'postprocess',
                    ignore=shutil.ignore_patterns('__pycache__'))
    shutil.copytree(ROOT / 'reframe' / 'mdxbench', tmp_path / 'reframe' / 'mdxbench',
                    ignore=shutil.ignore_patterns('__pycache__'))
    (tmp_path / 'postprocess' / 'extra').mkdir()
    (tmp_path / 'postprocess' / 'extra' / '__init__.py').write_text('')
    assert tree_packages(tmp_path) - listed_packages(tmp_path) == {'mdxbench.post.extra'}
    subs = {p.split('.')[2] for p in tree_packages(tmp_path) if p.startswith('mdxbench.post.')}
    assert subs - table_subpackages(tmp_path) == {'extra'}
